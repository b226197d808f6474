package httpserver_test

// The differential test: the same raw bytes go to net/http's server and to
// httpserver, both serving one recording Handler, and what the Handler saw
// and what the client got are compared.
//
// # Outcomes
//
// An outcome is what one server made of one case's bytes, sent on a fresh
// TCP connection: the requests its Handler got, in order (reqView: the
// fields of the *http.Request, the body read to its end, the trailer read
// after it), the responses the client read (respView, parsed with
// http.ReadResponse) and how the connection ended (closed by the server,
// left open, or left open with a Handler waiting for body bytes that never
// come). The Handler answers as the request's X-Act header asks (echo by
// default), so that the response side (sniffing, the ResponseWriter's
// contract, framing) is compared as well as the parser. A response the
// Handler wrote carries an X-Served header with the request's index on its
// connection; a response without one is the server's own (a refusal, 100
// Continue), of which only the status is compared: the two servers word
// their error bodies differently, and net/http adds Connection: close.
// The Date header is never compared.
//
// # Knowing when a server is done
//
// A server that closes the connection is done when the client reads the
// end of the stream. One that keeps it open is waiting for more: it is
// taken as done when no Handler of the connection runs and nothing has
// happened for a quiet period (no byte received, no Handler started,
// returned or read its body), or, with a Handler running, when that
// Handler has waited that long for body bytes (the connection is then
// "stuck"; closing it ends the Handler's read with an error, which both
// servers report the same way). The Handler keys what it records by the
// client's address, which the client knows, so the cases run in parallel
// against two servers started once. The quiet period is short; when the
// two outcomes differ and a connection was still open, its collection
// goes on for a longer one before the outcomes are compared again, so a
// server slowed by a loaded machine costs time, not a false failure.
//
// # Allowed differences
//
// Every difference is a failure unless allowedDiffs (in
// differential_cases_test.go) names the case with the kind of difference
// it permits, each kind a deliberate strictness the RFCs allow:
// httpserver refuses a request net/http serves (diffStricter), fails the
// read of a body net/http reads (diffStricterBody), or closes a
// connection net/http keeps (diffCloses). httpserver serving more
// requests than net/http, its Handler seeing anything else different, or
// it accepting bytes net/http refuses, is never allowed; nor is a
// difference on the response side, which the Handler decides.

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/blitz-go/blitz"
	"github.com/blitz-go/blitz/httpserver"
)

// Timing of the collection (see "Knowing when a server is done").
const (
	diffPoll        = 20 * time.Millisecond  // read deadline between checks
	diffQuiet       = 120 * time.Millisecond // quiet period, first pass
	diffStuck       = 300 * time.Millisecond // a Handler waiting for body bytes, first pass
	diffQuietLong   = 800 * time.Millisecond // second pass, when the outcomes differ
	diffStuckLong   = 1200 * time.Millisecond
	diffLimit       = 5 * time.Second // bound of one pass
	diffHandlerWait = 5 * time.Second // bound of the wait for Handlers after the client closes
	diffParallel    = 12              // cases run at once
	diffSettle      = 8 * time.Second // bound of the longer passes of a case whose outcomes differ
)

// diffCase is one entry of the corpus: a name (a valid subtest name, unique)
// and the bytes a client sends, in one write.
type diffCase struct {
	name string
	raw  string
}

// diffKind is the kind of difference an allowedDiff permits.
type diffKind uint8

const (
	// diffStricter: httpserver refuses, with a 4xx or 5xx of its own and
	// the close, where net/http serves a request (or waits for more of
	// it); the requests both served before agree, and so do their
	// responses.
	diffStricter diffKind = iota + 1
	// diffStricterBody: httpserver's Handler gets an error reading a body
	// (a malformed chunked body or trailer) that net/http's reads whole
	// (or waits on); the request looks the same otherwise, what both
	// served before agrees, and httpserver serves nothing after it.
	diffStricterBody
	// diffCloses: httpserver closes the connection after a response, where
	// net/http goes on to read another request; what both served up to
	// then agrees.
	diffCloses
	// diffFraming: the responses agree but for their framing, both valid
	// HTTP/1.1 (RFC 9112 section 6): httpserver sends a Content-Length
	// where net/http chunks the body (or, for HEAD, sends no length).
	diffFraming
	// diffValidLength: net/http's response does not parse, because it
	// carries the Handler's invalid Content-Length; httpserver drops it
	// and its responses parse. What both served agrees.
	diffValidLength
)

func (k diffKind) String() string {
	switch k {
	case diffStricter:
		return "stricter"
	case diffStricterBody:
		return "stricter body"
	case diffCloses:
		return "closes"
	case diffFraming:
		return "framing"
	case diffValidLength:
		return "valid length"
	}
	return "kind(" + strconv.Itoa(int(k)) + ")"
}

// allowedDiff is an entry of the table of allowed differences: what may
// differ for one case, and the clause that allows it.
type allowedDiff struct {
	kind diffKind
	// status, for diffStricter, lists the statuses httpserver may refuse
	// with; nil means any 4xx or 5xx.
	status []int
	what   string
	ref    string
}

// reqView is what the Handler saw of one request. Body is what io.ReadAll
// of the body returned and BodyErr whether it failed ("error") or not;
// Trailer is read after the body. Header-like fields are rendered by
// headerText.
type reqView struct {
	Method, RequestURI                                 string
	URL, Path, RawPath, RawQuery, URLHost, Scheme, Opq string
	Proto                                              string
	ProtoMajor, ProtoMinor                             int
	Host                                               string
	Header                                             string
	ContentLength                                      int64
	TransferEncoding                                   string
	Close                                              bool
	Body, BodyErr                                      string
	Trailer                                            string
	Form                                               string
}

// respView is one response the client read. Served is the X-Served index
// of a response the Handler wrote, -1 for one of the server's own (then
// only Status is kept). Header leaves out Date, Connection,
// Content-Length and Transfer-Encoding; Connection is that header's
// values, and Framing says how the body was delimited.
type respView struct {
	Served     int
	Proto      string
	Status     int
	Header     string
	Connection string
	Framing    string
	Body       string
	BodyErr    string
	Trailer    string
}

// outcome is what one server made of one case's bytes.
type outcome struct {
	views []reqView
	resps []respView
	// rest describes bytes after the last response that do not parse as
	// one ("" when there are none).
	rest string
	// end is how the connection ended: "closed" (end of stream or reset),
	// "open" (kept open, quiet), "stuck" (kept open with a Handler waiting
	// for body bytes), "timeout" (still busy at the bound of a pass), or
	// "hung" (a Handler did not return after the client closed).
	end string
}

// diffResult is the outcome of one case on both servers.
type diffResult struct {
	n, h  outcome // net/http, httpserver
	diffs []string
	err   error
}

// diffRecorder is the Handler both servers serve: it records what each
// request looked like, per connection, and answers as the request's X-Act
// header asks.
type diffRecorder struct {
	mu sync.Mutex
	// conns is keyed by connKey; written by the client side (open,
	// forget), read by Handlers.
	conns map[string]*connRecord
	// strays counts requests on connections the client side did not
	// register (a key that does not match would hide every request).
	strays int
}

// connKey names a connection by both its ends (a client's port alone may
// be shared by connections to the two servers).
func connKey(server, client string) string { return server + "|" + client }

func requestConnKey(r *http.Request) string {
	server := "?"
	if a, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr); ok {
		server = a.String()
	}
	return connKey(server, r.RemoteAddr)
}

// connRecord is what the Handler saw on one connection. mu guards its
// fields; Handlers write them, the client side reads them.
type connRecord struct {
	mu        sync.Mutex
	views     []reqView
	inFlight  int       // Handlers started and not returned
	lastEvent time.Time // last Handler start, return or body read, or write by the client
}

// open registers the connection key; called by the client side before it
// sends anything.
func (d *diffRecorder) open(key string) *connRecord {
	cr := &connRecord{lastEvent: time.Now()}
	d.mu.Lock()
	d.conns[key] = cr
	d.mu.Unlock()
	return cr
}

// forget drops the record cr of the connection key; called by the client
// side once its Handlers returned.
func (d *diffRecorder) forget(key string, cr *connRecord) {
	d.mu.Lock()
	if d.conns[key] == cr {
		delete(d.conns, key)
	}
	d.mu.Unlock()
}

func (d *diffRecorder) lookup(key string) *connRecord {
	d.mu.Lock()
	defer d.mu.Unlock()
	cr := d.conns[key]
	if cr == nil { // a connection the client side does not know: record it anyway
		d.strays++
		cr = &connRecord{}
		d.conns[key] = cr
	}
	return cr
}

func (cr *connRecord) touch() {
	cr.mu.Lock()
	cr.lastEvent = time.Now()
	cr.mu.Unlock()
}

// begin counts a Handler in and returns its request's index.
func (cr *connRecord) begin() int {
	cr.mu.Lock()
	defer cr.mu.Unlock()
	cr.inFlight++
	cr.lastEvent = time.Now()
	cr.views = append(cr.views, reqView{})
	return len(cr.views) - 1
}

func (cr *connRecord) record(i int, v reqView) {
	cr.mu.Lock()
	cr.views[i] = v
	cr.lastEvent = time.Now()
	cr.mu.Unlock()
}

func (cr *connRecord) end() {
	cr.mu.Lock()
	cr.inFlight--
	cr.lastEvent = time.Now()
	cr.mu.Unlock()
}

func (cr *connRecord) state() (inFlight int, last time.Time, views []reqView) {
	cr.mu.Lock()
	defer cr.mu.Unlock()
	return cr.inFlight, cr.lastEvent, slices.Clone(cr.views)
}

// watchedBody is a request body whose reads count as events of the
// connection.
type watchedBody struct {
	r  io.Reader
	cr *connRecord
}

func (b watchedBody) Read(p []byte) (int, error) {
	n, err := b.r.Read(p)
	b.cr.touch()
	return n, err
}

func (d *diffRecorder) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	cr := d.lookup(requestConnKey(r))
	seq := cr.begin()
	defer cr.end()
	w.Header().Set("X-Served", strconv.Itoa(seq))
	act := strings.Fields(r.Header.Get("X-Act"))
	if len(act) == 0 {
		act = []string{"echo"}
	}
	v := viewRequest(r)
	switch act[0] {
	case "noread":
		v.Body = "<not read>"
	case "form":
		if err := r.ParseForm(); err != nil {
			v.BodyErr = "error"
		}
		v.Body = "<parsed>"
		v.Form = "form=" + r.Form.Encode() + " post=" + r.PostForm.Encode()
	default:
		b, err := io.ReadAll(watchedBody{r.Body, cr})
		v.Body = string(b)
		if err != nil {
			v.BodyErr = "error"
		}
	}
	v.Trailer = headerText(r.Trailer, nil)
	cr.record(seq, v)
	respond(w, r, act, v)
}

func viewRequest(r *http.Request) reqView {
	v := reqView{
		Method:           r.Method,
		RequestURI:       r.RequestURI,
		Proto:            r.Proto,
		ProtoMajor:       r.ProtoMajor,
		ProtoMinor:       r.ProtoMinor,
		Host:             r.Host,
		Header:           headerText(r.Header, nil),
		ContentLength:    r.ContentLength,
		TransferEncoding: fmt.Sprintf("%q", r.TransferEncoding),
		Close:            r.Close,
	}
	if u := r.URL; u != nil {
		v.URL, v.Path, v.RawPath, v.RawQuery, v.URLHost, v.Scheme, v.Opq = u.String(), u.Path, u.RawPath, u.RawQuery, u.Host, u.Scheme, u.Opaque
	} else {
		v.URL = "<nil>"
	}
	return v
}

// headerText renders a header (nil and empty alike) in a canonical order,
// leaving out the keys in skip.
func headerText(h http.Header, skip []string) string {
	keys := make([]string, 0, len(h))
	for k := range h {
		if !slices.Contains(skip, k) {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	var b strings.Builder
	for _, k := range keys {
		fmt.Fprintf(&b, "%q:%q ", k, h[k])
	}
	return b.String()
}

// Bodies the Handler writes.
func htmlBody(n int) []byte {
	b := []byte("<!DOCTYPE html><html><head><title>t</title></head><body>")
	for len(b) < n {
		b = append(b, "<p>lorem ipsum</p>\n"...)
	}
	return b[:n]
}

func binBody(n int) []byte {
	b := []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
	for i := 0; len(b) < n; i++ {
		b = append(b, byte(i%251))
	}
	return b[:n]
}

func textBody(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = 'a' + byte(i%26)
	}
	return b
}

// diffModTime is the modification time of ServeContent's content.
var diffModTime = time.Date(2020, 1, 2, 3, 4, 5, 0, time.UTC)

// respond writes the response act asks for; v is the request's view
// (the echo writes a summary of it).
func respond(w http.ResponseWriter, r *http.Request, act []string, v reqView) {
	// arg is the number act[i], or def; bounded, since the fuzz target
	// makes up X-Act values too.
	arg := func(i, def int) int {
		if i < len(act) {
			if n, err := strconv.Atoi(act[i]); err == nil {
				return max(0, min(n, 1<<20))
			}
		}
		return def
	}
	parts := func(b []byte, k int) {
		k = max(1, min(k, 1000))
		step := (len(b) + k - 1) / k
		for len(b) > 0 {
			s := min(step, len(b))
			_, _ = w.Write(b[:s])
			b = b[s:]
		}
	}
	h := w.Header()
	switch act[0] {
	case "html":
		parts(htmlBody(arg(1, 100)), arg(2, 1))
	case "bin":
		parts(binBody(arg(1, 100)), arg(2, 1))
	case "text":
		parts(textBody(arg(1, 100)), arg(2, 1))
	case "ws-html": // sniffing sees past a first write of white space
		_, _ = io.WriteString(w, "  \n")
		_, _ = w.Write(htmlBody(arg(1, 100)))
	case "latehdr": // a header set after the first Write is ignored
		_, _ = io.WriteString(w, "first\n")
		h.Set("X-Late", "1")
		_, _ = io.WriteString(w, "second\n")
	case "afterwh": // and one set after WriteHeader
		w.WriteHeader(http.StatusAccepted)
		h.Set("X-Late", "1")
		_, _ = io.WriteString(w, "body\n")
	case "keptmap": // the map kept from before WriteHeader, changed after it
		h.Set("X-Before", "1")
		w.WriteHeader(http.StatusCreated)
		h.Set("X-After", "1")
		h.Del("X-Before")
		_, _ = io.WriteString(w, "body\n")
	case "twice":
		w.WriteHeader(http.StatusCreated)
		w.WriteHeader(http.StatusAccepted)
		_, _ = io.WriteString(w, "body\n")
	case "flush":
		_, _ = io.WriteString(w, "<html>a")
		w.(http.Flusher).Flush()
		_, _ = io.WriteString(w, "b</html>")
	case "flushfirst":
		w.(http.Flusher).Flush()
		_, _ = w.Write(htmlBody(arg(1, 100)))
	case "flushonly":
		w.(http.Flusher).Flush()
	case "serve":
		name := "f.txt"
		if len(act) > 2 {
			name = act[2]
		}
		http.ServeContent(w, r, name, diffModTime, bytes.NewReader(textBody(arg(1, 100))))
	case "servehtml":
		http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(htmlBody(arg(1, 100))))
	case "error":
		http.Error(w, "no luck", arg(1, http.StatusTeapot))
	case "redirect":
		target := "/there?x=1"
		if len(act) > 2 {
			target = act[2]
		}
		http.Redirect(w, r, target, arg(1, http.StatusFound))
	case "cl": // Content-Length set to act[1], act[2] bytes written
		h.Set("Content-Length", act[1])
		_, _ = w.Write(textBody(arg(2, 5)))
	case "status":
		w.WriteHeader(arg(1, http.StatusOK))
		_, _ = io.WriteString(w, "body\n")
	case "interim":
		h.Set("Link", "</a.css>; rel=preload")
		w.WriteHeader(arg(1, http.StatusEarlyHints))
		w.WriteHeader(http.StatusOK)
		_, _ = io.WriteString(w, "after\n")
	case "nosniff":
		h["Content-Type"] = nil
		_, _ = io.WriteString(w, "<html>x</html>")
	case "ctype":
		h.Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, "{}")
	case "connclose":
		h.Set("Connection", "close")
		_, _ = io.WriteString(w, "bye\n")
	case "connhdr": // Connection set to act[1] (or left empty)
		val := ""
		if len(act) > 1 {
			val = act[1]
		}
		h.Set("Connection", val)
		_, _ = io.WriteString(w, "conn\n")
	case "empty":
	case "trailer":
		h.Set("Trailer", "X-T")
		_, _ = io.WriteString(w, "body\n")
		h.Set("X-T", "v")
	case "tehdr":
		h.Set("Transfer-Encoding", "chunked")
		_, _ = io.WriteString(w, "body\n")
	case "cookie":
		http.SetCookie(w, &http.Cookie{Name: "a", Value: "b", Path: "/"})
		http.SetCookie(w, &http.Cookie{Name: "c", Value: "d"})
		_, _ = io.WriteString(w, "body\n")
	default: // echo, noread, form
		fmt.Fprintf(w, "%s %s %d %s\n", v.Method, v.RequestURI, len(v.Body), v.BodyErr)
	}
}

// diffPair is net/http's server and httpserver, serving one recorder.
type diffPair struct {
	rec     *diffRecorder
	netAddr string // net/http
	hsAddr  string // httpserver
}

// startDiffPair starts both servers, torn down by tb's cleanup. It is
// startServer for a testing.TB (the fuzz target has no *testing.T before
// f.Fuzz) with net/http's server beside it.
func startDiffPair(tb testing.TB) *diffPair {
	tb.Helper()
	rec := &diffRecorder{conns: map[string]*connRecord{}}
	quiet := log.New(io.Discard, "", 0)

	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	ns := &http.Server{Handler: rec, ErrorLog: quiet, DisableGeneralOptionsHandler: true}
	nerr := make(chan error, 1)
	go func() { nerr <- ns.Serve(l) }()
	tb.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := ns.Shutdown(ctx); err != nil {
			tb.Errorf("net/http Shutdown: %v", err)
			_ = ns.Close()
		}
		<-nerr
	})

	hs := startServer(tb, blitz.Config{Workers: 2}, &httpserver.Server{Handler: rec, ErrorLog: quiet})
	return &diffPair{rec: rec, netAddr: l.Addr().String(), hsAddr: hs.addr}
}

// probe is one connection of a case to one server. Owned by the
// goroutine running the case; the writer goroutine only writes raw and
// closes wdone.
type probe struct {
	conn  net.Conn
	key   string
	rec   *connRecord
	got   []byte
	last  time.Time // last byte received
	end   string
	wdone chan struct{}
}

// dialProbe connects to addr, registers the connection with the recorder
// and sends raw (from a goroutine of its own, so that a server that stops
// reading does not block the collection).
//
// With halfClose, the client shuts its sending side after raw: both
// servers then read the end of the stream after raw and close the
// connection once they are done, so the collection needs no quiet period
// (a fuzzing input costs a few round trips, not 120 ms).
func dialProbe(d *diffRecorder, addr string, raw []byte, halfClose bool) (*probe, error) {
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		return nil, err
	}
	p := &probe{conn: c, key: connKey(c.RemoteAddr().String(), c.LocalAddr().String()), last: time.Now(), wdone: make(chan struct{})}
	p.rec = d.open(p.key)
	go func() {
		defer close(p.wdone)
		_, _ = c.Write(raw)
		if halfClose {
			_ = c.(*net.TCPConn).CloseWrite()
		}
		p.rec.touch()
	}()
	return p, nil
}

// collect reads what the server sends until it closes the connection or
// is done with it (see "Knowing when a server is done"), or limit passes.
func (p *probe) collect(quiet, stuck, limit time.Duration) {
	if p.end == "closed" {
		return
	}
	start := time.Now()
	buf := make([]byte, 32<<10)
	for {
		_ = p.conn.SetReadDeadline(time.Now().Add(diffPoll))
		n, err := p.conn.Read(buf)
		if n > 0 {
			p.got = append(p.got, buf[:n]...)
			p.last = time.Now()
		}
		if err == nil {
			continue
		}
		var ne net.Error
		if !errors.As(err, &ne) || !ne.Timeout() {
			p.end = "closed"
			return
		}
		inFlight, last, _ := p.rec.state()
		if p.last.After(last) {
			last = p.last
		}
		idle := time.Since(last)
		switch {
		case inFlight == 0 && idle >= quiet:
			p.end = "open"
			return
		case inFlight > 0 && idle >= stuck:
			p.end = "stuck"
			return
		case time.Since(start) >= limit:
			p.end = "timeout"
			return
		}
	}
}

// snapshot is the outcome so far, the connection left as it is.
func (p *probe) snapshot() outcome {
	_, _, views := p.rec.state()
	resps, rest := parseResponses(p.got, views)
	return outcome{views: views, resps: resps, rest: rest, end: p.end}
}

// finish ends the connection and returns the final outcome. It shuts the
// client's sending side and reads until the server closes: a server
// slowed by a loaded machine may not have started on the bytes it was
// sent when the collection judged it done, and it serves them now, before
// the end of the stream; what it answers is kept. Then it waits for the
// connection's Handlers to return.
func (p *probe) finish(d *diffRecorder) outcome {
	<-p.wdone
	if p.end != "closed" {
		_ = p.conn.(*net.TCPConn).CloseWrite()
		_ = p.conn.SetReadDeadline(time.Now().Add(diffLimit))
		rest, err := io.ReadAll(p.conn)
		p.got = append(p.got, rest...)
		if err != nil {
			p.end = "hung" // not closed within diffLimit of the end of the stream
		}
	}
	_ = p.conn.Close()
	deadline := time.Now().Add(diffHandlerWait)
	for {
		if n, _, _ := p.rec.state(); n == 0 {
			break
		}
		if time.Now().After(deadline) {
			p.end = "hung"
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	d.forget(p.key, p.rec)
	return p.snapshot()
}

// parseResponses parses the responses in got; views tell the method of
// the request each final response answers (a response to HEAD has no
// body).
func parseResponses(got []byte, views []reqView) ([]respView, string) {
	br := bufio.NewReader(bytes.NewReader(got))
	var out []respView
	next := 0
	for {
		if _, err := br.Peek(1); err != nil {
			return out, ""
		}
		method := http.MethodGet
		if next < len(views) && views[next].Method != "" {
			method = views[next].Method
		}
		resp, err := http.ReadResponse(br, &http.Request{Method: method})
		if err != nil {
			return out, fmt.Sprintf("unparsable: %v", err)
		}
		body, berr := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		rv := respView{Served: -1, Status: resp.StatusCode}
		if s := resp.Header.Get("X-Served"); s != "" {
			rv.Served, _ = strconv.Atoi(s)
			rv.Proto = resp.Proto
			rv.Header = headerText(resp.Header, []string{"Date", "Connection", "Content-Length"})
			rv.Connection = fmt.Sprintf("%q", resp.Header.Values("Connection"))
			rv.Framing = fmt.Sprintf("te=%q cl=%d header-cl=%q", resp.TransferEncoding, resp.ContentLength, resp.Header.Values("Content-Length"))
			rv.Body = string(body)
			if berr != nil {
				rv.BodyErr = "error"
			}
			rv.Trailer = headerText(resp.Trailer, nil)
		}
		out = append(out, rv)
		if resp.StatusCode >= 200 || resp.StatusCode == http.StatusSwitchingProtocols {
			next++
		}
		if berr != nil {
			return out, ""
		}
	}
}

// run sends raw to both servers and compares the outcomes. Safe for
// concurrent use.
//
// settled, if not nil, says whether a difference is one to accept as it
// is (an allowed one): while the outcomes differ otherwise and a
// connection is open, the collection goes on in longer passes, up to
// diffSettle, so that a server slowed by a loaded machine (or Wine) is
// not taken for one that answers differently.
func (pr *diffPair) run(raw []byte, settled func(n, h outcome) bool) diffResult {
	return pr.runMode(raw, false, settled)
}

// runHalfClosed is run with the client's sending side shut after raw (see
// dialProbe): whether a server keeps a connection open is not observed,
// but what its Handler saw and how many requests it served are, at a cost
// of a few round trips. FuzzDifferential uses it.
func (pr *diffPair) runHalfClosed(raw []byte) diffResult {
	return pr.runMode(raw, true, nil)
}

func (pr *diffPair) runMode(raw []byte, halfClose bool, settled func(n, h outcome) bool) diffResult {
	pn, err := dialProbe(pr.rec, pr.netAddr, raw, halfClose)
	if err != nil {
		return diffResult{err: err}
	}
	ph, err := dialProbe(pr.rec, pr.hsAddr, raw, halfClose)
	if err != nil {
		pn.finish(pr.rec)
		return diffResult{err: err}
	}
	both := func(quiet, stuck time.Duration) {
		var wg sync.WaitGroup
		for _, p := range []*probe{pn, ph} {
			wg.Go(func() { p.collect(quiet, stuck, diffLimit) })
		}
		wg.Wait()
	}
	if halfClose {
		both(diffLimit, diffLimit) // both close
	} else {
		both(diffQuiet, diffStuck)
	}
	// Give a slow server time before calling it a difference.
	for start := time.Now(); !halfClose && time.Since(start) < diffSettle; {
		n, h := pn.snapshot(), ph.snapshot()
		if len(compareOutcomes(n, h)) == 0 || (pn.end == "closed" && ph.end == "closed") || (settled != nil && settled(n, h)) {
			break
		}
		both(diffQuietLong, diffStuckLong)
	}
	var res diffResult
	var wg sync.WaitGroup
	wg.Go(func() { res.n = pn.finish(pr.rec) })
	wg.Go(func() { res.h = ph.finish(pr.rec) })
	wg.Wait()
	res.diffs = compareOutcomes(res.n, res.h)
	return res
}

// endClass folds the ends that mean the same for the comparison.
func endClass(e string) string {
	if e == "timeout" {
		return "open"
	}
	return e
}

// compareOutcomes lists the differences between net/http's outcome n and
// httpserver's h.
func compareOutcomes(n, h outcome) []string {
	var d []string
	if len(n.views) != len(h.views) {
		d = append(d, fmt.Sprintf("requests served: net/http %d, httpserver %d", len(n.views), len(h.views)))
	}
	for i := range min(len(n.views), len(h.views)) {
		for _, f := range fieldDiffs(n.views[i], h.views[i]) {
			d = append(d, fmt.Sprintf("request %d: %s", i, f))
		}
	}
	if len(n.resps) != len(h.resps) {
		d = append(d, fmt.Sprintf("responses: net/http %d %s, httpserver %d %s", len(n.resps), statuses(n.resps), len(h.resps), statuses(h.resps)))
	}
	for i := range min(len(n.resps), len(h.resps)) {
		for _, f := range fieldDiffs(n.resps[i], h.resps[i]) {
			d = append(d, fmt.Sprintf("response %d: %s", i, f))
		}
	}
	if (n.rest == "") != (h.rest == "") {
		d = append(d, fmt.Sprintf("trailing bytes: net/http %q, httpserver %q", n.rest, h.rest))
	}
	if endClass(n.end) != endClass(h.end) {
		d = append(d, fmt.Sprintf("connection: net/http %s, httpserver %s", n.end, h.end))
	}
	return d
}

// fieldDiffs lists the fields in which two structs of one type differ.
func fieldDiffs(a, b any) []string {
	va, vb := reflect.ValueOf(a), reflect.ValueOf(b)
	var d []string
	for i := range va.NumField() {
		x, y := va.Field(i).Interface(), vb.Field(i).Interface()
		if x != y {
			d = append(d, fmt.Sprintf("%s: net/http %s, httpserver %s", va.Type().Field(i).Name, short(x), short(y)))
		}
	}
	return d
}

func short(x any) string {
	s := fmt.Sprintf("%q", fmt.Sprint(x))
	if len(s) > 160 {
		s = s[:150] + fmt.Sprintf("…(%d bytes)", len(s))
	}
	return s
}

func statuses(rs []respView) string {
	var b strings.Builder
	b.WriteByte('[')
	for i, r := range rs {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(strconv.Itoa(r.Status))
		if r.Served >= 0 {
			fmt.Fprintf(&b, "#%d", r.Served)
		}
	}
	b.WriteByte(']')
	return b.String()
}

// summary is a one-line account of an outcome, for failure messages.
func (o outcome) summary() string {
	var b strings.Builder
	b.WriteString("served [")
	for i, v := range o.views {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%s %s", v.Method, v.RequestURI)
		if v.Body != "" {
			fmt.Fprintf(&b, " body=%d", len(v.Body))
		}
		if v.BodyErr != "" {
			b.WriteString(" body-error")
		}
	}
	fmt.Fprintf(&b, "], responses %s, %s", statuses(o.resps), o.end)
	if o.rest != "" {
		b.WriteString(", " + o.rest)
	}
	return b.String()
}

// isRefusal reports whether r is a 4xx or 5xx of the server's own.
func isRefusal(r respView) bool { return r.Served < 0 && r.Status >= 400 }

// covers reports whether the differences between n and h are the ones a
// permits.
func (a allowedDiff) covers(n, h outcome) bool {
	switch a.kind {
	case diffFraming:
		return coversFraming(n, h)
	case diffValidLength:
		return h.rest == "" && strings.Contains(n.rest, "bad Content-Length") && len(n.resps) < len(h.resps) &&
			slices.Equal(n.views, h.views) && slices.Equal(n.resps, h.resps[:len(n.resps)])
	}
	if h.end != "closed" || h.rest != "" || len(h.views) > len(n.views) {
		return false
	}
	// served is how many requests both served alike; the responses to
	// those agree.
	served := len(h.views)
	if a.kind == diffStricterBody {
		if served == 0 {
			return false
		}
		served--
		bn, bh := n.views[served], h.views[served]
		if bh.BodyErr == "" {
			return false
		}
		bn.Body, bn.BodyErr, bn.Trailer = "", "", ""
		bh.Body, bh.BodyErr, bh.Trailer = "", "", ""
		if bn != bh {
			return false
		}
	}
	if !slices.Equal(h.views[:served], n.views[:served]) {
		return false
	}
	answered := func(rs []respView) []respView {
		return slices.DeleteFunc(slices.Clone(rs), func(r respView) bool { return r.Served < 0 || r.Served >= served })
	}
	hr := h.resps
	switch a.kind {
	case diffStricter:
		if len(hr) == 0 || !isRefusal(hr[len(hr)-1]) || (a.status != nil && !slices.Contains(a.status, hr[len(hr)-1].Status)) {
			return false
		}
		hr = hr[:len(hr)-1]
	case diffCloses:
		if served == len(n.views) {
			return false
		}
		// The last response says whether the connection stays.
		n.resps, hr = slices.Clone(n.resps), slices.Clone(hr)
		for _, rs := range [][]respView{n.resps, hr} {
			for i := range rs {
				if rs[i].Served == served-1 {
					rs[i].Connection = ""
				}
			}
		}
	}
	return slices.Equal(answered(hr), answered(n.resps)) && !slices.ContainsFunc(hr, isRefusal)
}

// coversFraming reports whether n and h differ only in the framing of
// responses, where httpserver's has a Content-Length and net/http's none.
func coversFraming(n, h outcome) bool {
	if n.end != h.end || n.rest != h.rest || !slices.Equal(n.views, h.views) || len(n.resps) != len(h.resps) {
		return false
	}
	for i := range n.resps {
		rn, rh := n.resps[i], h.resps[i]
		if rn.Framing != rh.Framing {
			if !strings.Contains(rn.Framing, "cl=-1") || !strings.HasPrefix(rh.Framing, "te=[] cl=") || strings.Contains(rh.Framing, "cl=-1") {
				return false
			}
			rn.Framing, rh.Framing = "", ""
		}
		if rn != rh {
			return false
		}
	}
	return true
}

// TestDifferential sends every case of the corpus to net/http and to
// httpserver and fails for every difference the table of allowed
// differences does not name.
func TestDifferential(t *testing.T) {
	cases := differentialCases()
	if len(cases) < 300 {
		t.Errorf("the corpus has %d cases, want at least 300", len(cases))
	}
	names := map[string]bool{}
	for _, c := range cases {
		if names[c.name] {
			t.Errorf("case %s appears twice", c.name)
		}
		names[c.name] = true
	}
	for name := range allowedDiffs {
		if !names[name] {
			t.Errorf("allowedDiffs names %s, which is not a case", name)
		}
	}

	pair := startDiffPair(t)
	results := make([]diffResult, len(cases))
	sem := make(chan struct{}, diffParallel)
	var wg sync.WaitGroup
	for i, c := range cases {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			var settled func(n, h outcome) bool
			if allowed, ok := allowedDiffs[c.name]; ok {
				settled = allowed.covers
			}
			results[i] = pair.run([]byte(c.raw), settled)
		})
	}
	wg.Wait()
	pair.rec.mu.Lock()
	if pair.rec.strays > 0 {
		t.Errorf("%d requests came on connections the recorder does not know", pair.rec.strays)
	}
	pair.rec.mu.Unlock()

	for i, c := range cases {
		res := results[i]
		t.Run(c.name, func(t *testing.T) {
			if res.err != nil {
				t.Fatal(res.err)
			}
			allowed, ok := allowedDiffs[c.name]
			switch {
			case len(res.diffs) == 0 && ok:
				t.Logf("allowed difference (%s) no longer occurs: both %s", allowed.kind, res.n.summary())
			case len(res.diffs) == 0:
				if testing.Verbose() {
					t.Logf("both: %s", res.n.summary())
				}
			case ok && allowed.covers(res.n, res.h):
				t.Logf("allowed (%s, %s): %s", allowed.kind, allowed.ref, allowed.what)
			default:
				msg := fmt.Sprintf("request %q\nnet/http:   %s\nhttpserver: %s\n  %s",
					clip(c.raw), res.n.summary(), res.h.summary(), strings.Join(res.diffs, "\n  "))
				if ok {
					msg += fmt.Sprintf("\n(allowedDiffs permits only: %s, %s)", allowed.kind, allowed.what)
				}
				t.Error(msg)
			}
		})
	}
}

func clip(s string) string {
	if len(s) > 300 {
		return s[:300] + fmt.Sprintf("…(%d bytes)", len(s))
	}
	return s
}

// fuzzVerdict is FuzzDifferential's check: httpserver serves no more
// requests than net/http from the same bytes, and the requests both serve
// look the same to the Handler. Being stricter is always allowed here: a
// refusal (fewer requests served), or a body read that fails in
// httpserver's Handler where net/http's succeeds, provided it is the last
// request httpserver serves.
func fuzzVerdict(n, h outcome) error {
	if len(h.views) > len(n.views) {
		return fmt.Errorf("httpserver served %d requests, net/http %d", len(h.views), len(n.views))
	}
	for i := range h.views {
		vn, vh := n.views[i], h.views[i]
		if vh.BodyErr != "" && i == len(h.views)-1 {
			vn.Body, vn.BodyErr, vn.Trailer = "", "", ""
			vh.Body, vh.BodyErr, vh.Trailer = "", "", ""
		}
		if d := fieldDiffs(vn, vh); len(d) > 0 {
			return fmt.Errorf("request %d differs: %s", i, strings.Join(d, "; "))
		}
	}
	return nil
}

// FuzzDifferential sends arbitrary bytes to both servers (started once)
// and checks fuzzVerdict. The seed corpus (testdata/fuzz/FuzzDifferential)
// is a sample of TestDifferential's cases, named after them, and inputs
// the fuzzer found. The client half-closes each connection after its
// input (see runHalfClosed), so an input costs a few round trips, and the
// check that both servers close such a connection comes with it.
func FuzzDifferential(f *testing.F) {
	pair := startDiffPair(f)
	f.Add([]byte("GET / HTTP/1.1\r\nHost: x\r\n\r\n"))
	f.Fuzz(func(t *testing.T, raw []byte) {
		if len(raw) > 64<<10 {
			t.Skip("too long")
		}
		t.Parallel() // while the seeds run; no effect when fuzzing
		res := pair.runHalfClosed(raw)
		if res.err != nil {
			t.Fatal(res.err)
		}
		if res.n.end != "closed" || res.h.end != "closed" {
			t.Fatalf("a server did not close a half-closed connection within %v\nrequest %q\nnet/http:   %s\nhttpserver: %s", diffLimit, clip(string(raw)), res.n.summary(), res.h.summary())
		}
		if err := fuzzVerdict(res.n, res.h); err != nil {
			t.Fatalf("%v\nrequest %q\nnet/http:   %s\nhttpserver: %s", err, clip(string(raw)), res.n.summary(), res.h.summary())
		}
	})
}
