package httpserver_test

// The corpus of TestDifferential, and its table of allowed differences.

import (
	"fmt"
	"net/http"
	"strings"
)

// msg is a request of header lines joined with CRLF, its header block
// ended; a body follows it.
func msg(lines ...string) string { return strings.Join(lines, "\r\n") + "\r\n\r\n" }

// nextReq follows a request whose framing is in doubt: a server that
// reads the framing otherwise serves a different number of requests, or
// a request with a different body.
const nextReq = "GET /next HTTP/1.1\r\nHost: x\r\n\r\n"

// chunkedHello is a chunked body of "hello" and its last chunk.
const chunkedHello = "5\r\nhello\r\n0\r\n\r\n"

// caseList gathers the corpus.
type caseList []diffCase

func (l *caseList) add(name, raw string) { *l = append(*l, diffCase{name: name, raw: raw}) }

// differentialCases returns the corpus, built anew on each call.
func differentialCases() []diffCase {
	var l caseList
	shapeCases(&l)
	bodyCases(&l)
	smugglingCases(&l)
	malformedCases(&l)
	unicodeCases(&l)
	hostCases(&l)
	responseCases(&l)
	return l
}

// shapeCases: the valid request shapes.
func shapeCases(l *caseList) {
	l.add("get-root", msg("GET / HTTP/1.1", "Host: x"))
	l.add("get-path-query", msg("GET /a/b?c=d&e=f HTTP/1.1", "Host: x"))
	for _, m := range []string{"HEAD", "POST", "PUT", "DELETE", "PATCH", "OPTIONS", "TRACE", "PROPFIND", "M-SEARCH", "FOO_BAR", "get", "Get", "X!#$%&'*+.^`|~"} {
		l.add("method-"+strings.NewReplacer("!", "", "#", "", "$", "", "%", "", "&", "", "'", "", "*", "", "+", "", ".", "", "^", "", "`", "", "|", "", "~", "").Replace(m),
			msg(m+" /m HTTP/1.1", "Host: x"))
	}
	l.add("method-with-body-get", msg("GET / HTTP/1.1", "Host: x", "Content-Length: 3")+"abc")
	l.add("method-delete-body", msg("DELETE /d HTTP/1.1", "Host: x", "Content-Length: 3")+"abc")

	// Request targets.
	l.add("target-absolute", msg("GET http://example.com/p?q=1 HTTP/1.1", "Host: example.com"))
	l.add("target-absolute-https", msg("GET https://example.com/ HTTP/1.1", "Host: example.com"))
	l.add("target-absolute-upper-scheme", msg("GET HTTP://EXAMPLE.com/x HTTP/1.1", "Host: example.com"))
	l.add("target-absolute-port", msg("GET http://example.com:8080/p HTTP/1.1", "Host: example.com:8080"))
	l.add("target-absolute-userinfo", msg("GET http://u:p@example.com/p HTTP/1.1", "Host: example.com"))
	l.add("target-absolute-other-host", msg("GET http://a.example/p HTTP/1.1", "Host: b.example"))
	l.add("target-absolute-no-path", msg("GET http://example.com HTTP/1.1", "Host: example.com"))
	l.add("target-absolute-query-only", msg("GET http://example.com?x=1 HTTP/1.1", "Host: example.com"))
	l.add("target-absolute-no-host-header", msg("GET http://example.com/p HTTP/1.1"))
	l.add("target-absolute-ftp", msg("GET ftp://example.com/p HTTP/1.1", "Host: example.com"))
	l.add("target-absolute-10", msg("GET http://example.com/p HTTP/1.0"))
	l.add("target-connect", msg("CONNECT example.com:443 HTTP/1.1", "Host: example.com:443"))
	l.add("target-connect-no-port", msg("CONNECT example.com HTTP/1.1", "Host: example.com"))
	l.add("target-connect-no-host", msg("CONNECT example.com:443 HTTP/1.1"))
	l.add("target-connect-path", msg("CONNECT /tunnel HTTP/1.1", "Host: x"))
	l.add("target-connect-ipv6", msg("CONNECT [::1]:443 HTTP/1.1", "Host: [::1]:443"))
	l.add("target-connect-bad-port", msg("CONNECT example.com:4m3 HTTP/1.1", "Host: example.com:443"))
	l.add("target-connect-big-port", msg("CONNECT example.com:99999 HTTP/1.1", "Host: example.com"))
	l.add("target-connect-port-only", msg("CONNECT :443 HTTP/1.1", "Host: x"))
	l.add("target-connect-empty-port", msg("CONNECT example.com: HTTP/1.1", "Host: x"))
	l.add("target-connect-with-path", msg("CONNECT example.com:443/p HTTP/1.1", "Host: x"))
	l.add("target-connect-with-query", msg("CONNECT example.com:443?q HTTP/1.1", "Host: x"))
	l.add("target-connect-userinfo", msg("CONNECT u@example.com:443 HTTP/1.1", "Host: x"))
	l.add("target-connect-ipv6-unclosed", msg("CONNECT [::1:443 HTTP/1.1", "Host: x"))
	l.add("target-connect-percent", msg("CONNECT ex%41mple.com:443 HTTP/1.1", "Host: x"))
	l.add("target-absolute-bad-port", msg("GET http://example.com:4m3/ HTTP/1.1", "Host: example.com"))
	l.add("target-absolute-ipv6-unclosed", msg("GET http://[::1/ HTTP/1.1", "Host: x"))
	l.add("target-absolute-empty-authority", msg("GET http:///p HTTP/1.1", "Host: x"))
	l.add("target-absolute-scheme-only", msg("GET http:// HTTP/1.1", "Host: x"))
	l.add("target-absolute-percent-host", msg("GET http://ex%41mple.com/ HTTP/1.1", "Host: x"))
	l.add("target-options-asterisk", msg("OPTIONS * HTTP/1.1", "Host: x"))
	l.add("target-options-asterisk-10", msg("OPTIONS * HTTP/1.0"))
	l.add("target-get-asterisk", msg("GET * HTTP/1.1", "Host: x"))
	l.add("target-escaped-space", msg("GET /a%20b HTTP/1.1", "Host: x"))
	l.add("target-escaped-slash", msg("GET /a%2Fb/c HTTP/1.1", "Host: x"))
	l.add("target-escaped-utf8", msg("GET /%E2%82%AC?x=%E2%82%AC HTTP/1.1", "Host: x"))
	l.add("target-escaped-unreserved", msg("GET /%41%62c HTTP/1.1", "Host: x"))
	l.add("target-escaped-lowercase", msg("GET /a%2fb HTTP/1.1", "Host: x"))
	l.add("target-escaped-nul", msg("GET /a%00b HTTP/1.1", "Host: x"))
	l.add("target-bad-escape", msg("GET /a%zzb HTTP/1.1", "Host: x"))
	l.add("target-truncated-escape", msg("GET /a%2 HTTP/1.1", "Host: x"))
	l.add("target-bad-escape-query", msg("GET /a?x=%zz HTTP/1.1", "Host: x"))
	l.add("target-dot-segments", msg("GET /a/../b/./c HTTP/1.1", "Host: x"))
	l.add("target-escaped-dots", msg("GET /a/%2e%2e/b HTTP/1.1", "Host: x"))
	l.add("target-double-slash", msg("GET //a//b HTTP/1.1", "Host: x"))
	l.add("target-semicolon-path", msg("GET /a;b=c/d HTTP/1.1", "Host: x"))
	l.add("target-semicolon-query", msg("GET /a?x=1;y=2 HTTP/1.1", "Host: x"))
	l.add("target-empty-query", msg("GET /a? HTTP/1.1", "Host: x"))
	l.add("target-fragment", msg("GET /a#frag HTTP/1.1", "Host: x"))
	l.add("target-query-fragment", msg("GET /a?b#frag HTTP/1.1", "Host: x"))
	l.add("target-raw-utf8", msg("GET /\xc3\xa9t\xc3\xa9 HTTP/1.1", "Host: x"))
	l.add("target-raw-high-byte", msg("GET /\xff HTTP/1.1", "Host: x"))
	l.add("target-plus-tilde-at", msg("GET /a+b/~u/@x/a:b HTTP/1.1", "Host: x"))
	l.add("target-sub-delims", msg("GET /!$&'()*+,;= HTTP/1.1", "Host: x"))
	l.add("target-quotes-brackets", msg("GET /\"a\"/[b]/{c}/|d|/^e/`f` HTTP/1.1", "Host: x"))
	l.add("target-backslash", msg("GET /a\\b HTTP/1.1", "Host: x"))
	l.add("target-relative", msg("GET a/b HTTP/1.1", "Host: x"))
	l.add("target-long", msg("GET /"+strings.Repeat("abcdefgh", 1024)+" HTTP/1.1", "Host: x"))
	l.add("target-query-space-escaped", msg("GET /?a=b+c&d=%20 HTTP/1.1", "Host: x"))

	// Versions and keep-alive.
	l.add("http10-no-host", msg("GET /10 HTTP/1.0"))
	l.add("http10-host", msg("GET /10 HTTP/1.0", "Host: x"))
	l.add("http10-keep-alive", msg("GET /10 HTTP/1.0", "Connection: keep-alive"))
	l.add("http10-keep-alive-pipelined", msg("GET /1 HTTP/1.0", "Connection: keep-alive")+msg("GET /2 HTTP/1.0", "Connection: Keep-Alive")+msg("GET /3 HTTP/1.0"))
	l.add("http10-no-keep-alive-pipelined", msg("GET /1 HTTP/1.0")+msg("GET /2 HTTP/1.0"))
	l.add("http11-close", msg("GET / HTTP/1.1", "Host: x", "Connection: close"))
	l.add("http11-keep-alive", msg("GET / HTTP/1.1", "Host: x", "Connection: keep-alive"))
	l.add("http11-close-upper", msg("GET / HTTP/1.1", "Host: x", "Connection: CLOSE"))
	l.add("conn-list-keep-close", msg("GET / HTTP/1.1", "Host: x", "Connection: keep-alive, close"))
	l.add("conn-list-close-keep", msg("GET / HTTP/1.1", "Host: x", "Connection: close, keep-alive"))
	l.add("conn-list-upgrade-close", msg("GET / HTTP/1.1", "Host: x", "Connection: Upgrade,close", "Upgrade: websocket"))
	l.add("conn-list-other", msg("GET / HTTP/1.1", "Host: x", "Connection: x-foo, te"))
	l.add("conn-list-close-trailing-comma", msg("GET / HTTP/1.1", "Host: x", "Connection: close,"))
	l.add("conn-list-close-leading-comma", msg("GET / HTTP/1.1", "Host: x", "Connection: ,close"))
	l.add("conn-list-close-spaces", msg("GET / HTTP/1.1", "Host: x", "Connection:  foo ,\tclose\t, bar "))
	l.add("conn-list-closed", msg("GET / HTTP/1.1", "Host: x", "Connection: closed"))
	l.add("conn-list-clo-se", msg("GET / HTTP/1.1", "Host: x", "Connection: clo se"))
	// net/http reads the first Connection line alone for HTTP/1.0's
	// keep-alive and for a close between spaces; Request.Close reads them
	// all. A second request shows whether the connection was kept.
	l.add("http10-keep-alive-second-line", msg("GET /1 HTTP/1.0", "Connection:", "Connection: keep-alive")+msg("GET /2 HTTP/1.0"))
	l.add("http10-keep-alive-then-close-line", msg("GET /1 HTTP/1.0", "Connection: keep-alive", "Connection: close")+msg("GET /2 HTTP/1.0"))
	l.add("http10-close-then-keep-alive-line", msg("GET /1 HTTP/1.0", "Connection: close", "Connection: keep-alive")+msg("GET /2 HTTP/1.0"))
	l.add("http10-keep-alive-and-close-one-line", msg("GET /1 HTTP/1.0", "Connection: keep-alive, close")+msg("GET /2 HTTP/1.0"))
	l.add("http10-keep-alive-handler-connection-other", msg("GET /1 HTTP/1.0", "Connection: keep-alive", "X-Act: connhdr x-foo")+msg("GET /2 HTTP/1.0"))
	l.add("http10-keep-alive-handler-connection-empty", msg("GET /1 HTTP/1.0", "Connection: keep-alive", "X-Act: connhdr")+msg("GET /2 HTTP/1.0"))
	l.add("http10-keep-alive-handler-connection-keep-alive", msg("GET /1 HTTP/1.0", "Connection: keep-alive", "X-Act: connhdr keep-alive")+msg("GET /2 HTTP/1.0"))
	l.add("http11-handler-connection-close-list", msg("GET /1 HTTP/1.1", "Host: x", "X-Act: connhdr close,x-foo")+msg("GET /2 HTTP/1.1", "Host: x"))
	l.add("http11-handler-connection-close-upper", msg("GET /1 HTTP/1.1", "Host: x", "X-Act: connhdr CLOSE")+msg("GET /2 HTTP/1.1", "Host: x"))
	l.add("http10-keep-alive-handler-connection-close-list", msg("GET /1 HTTP/1.0", "Connection: keep-alive", "X-Act: connhdr close,x-foo")+msg("GET /2 HTTP/1.0"))
	l.add("http11-close-handler-connection-other", msg("GET /1 HTTP/1.1", "Host: x", "Connection: close", "X-Act: connhdr x-foo"))
	l.add("http11-close-handler-connection-close-list", msg("GET /1 HTTP/1.1", "Host: x", "Connection: close", "X-Act: connhdr x-foo,close"))
	l.add("http10-handler-connection-other", msg("GET /1 HTTP/1.0", "X-Act: connhdr x-foo"))
	l.add("http11-handler-connection-other", msg("GET /1 HTTP/1.1", "Host: x", "X-Act: connhdr x-foo")+msg("GET /2 HTTP/1.1", "Host: x"))
	l.add("http10-keep-alive-between-spaces", msg("GET /1 HTTP/1.0", "Connection: foo keep-alive")+msg("GET /2 HTTP/1.0"))
	l.add("http11-close-between-spaces", msg("GET /1 HTTP/1.1", "Host: x", "Connection: foo close")+msg("GET /2 HTTP/1.1", "Host: x"))
	l.add("http11-close-second-line", msg("GET /1 HTTP/1.1", "Host: x", "Connection: foo", "Connection: close")+msg("GET /2 HTTP/1.1", "Host: x"))
	l.add("http11-close-between-spaces-second-line", msg("GET /1 HTTP/1.1", "Host: x", "Connection: foo", "Connection: bar close")+msg("GET /2 HTTP/1.1", "Host: x"))
	l.add("conn-two-headers", msg("GET / HTTP/1.1", "Host: x", "Connection: keep-alive", "Connection: close"))
	l.add("conn-close-pipelined", msg("GET /1 HTTP/1.1", "Host: x", "Connection: close")+nextReq)
	l.add("conn-10-keep-list", msg("GET / HTTP/1.0", "Connection: foo, Keep-Alive"))
	l.add("conn-10-keep-close", msg("GET / HTTP/1.0", "Connection: keep-alive, close")+msg("GET /2 HTTP/1.0"))
	l.add("conn-10-keepalive-nohyphen", msg("GET / HTTP/1.0", "Connection: keepalive")+msg("GET /2 HTTP/1.0"))
	l.add("conn-keep-alive-header", msg("GET / HTTP/1.0", "Connection: keep-alive", "Keep-Alive: timeout=5")+msg("GET /2 HTTP/1.0"))

	// Pipelining.
	l.add("pipeline-2", msg("GET /1 HTTP/1.1", "Host: x")+msg("GET /2 HTTP/1.1", "Host: x"))
	l.add("pipeline-3-mixed", msg("GET /1 HTTP/1.1", "Host: x")+msg("POST /2 HTTP/1.1", "Host: x", "Content-Length: 5")+"hello"+msg("HEAD /3 HTTP/1.1", "Host: x"))
	l.add("pipeline-5", strings.Repeat(msg("GET /p HTTP/1.1", "Host: x"), 4)+msg("GET /last HTTP/1.1", "Host: x", "Connection: close"))
	l.add("pipeline-chunked-then-get", msg("POST /1 HTTP/1.1", "Host: x", "Transfer-Encoding: chunked")+chunkedHello+nextReq)
	l.add("pipeline-head-get", msg("HEAD /1 HTTP/1.1", "Host: x")+nextReq)
	l.add("pipeline-after-close", msg("GET /1 HTTP/1.1", "Host: x")+msg("GET /2 HTTP/1.1", "Host: x", "Connection: close")+nextReq)
	l.add("pipeline-bad-second", msg("GET /1 HTTP/1.1", "Host: x")+"BAD\r\n\r\n")
	l.add("pipeline-leading-crlf", "\r\n"+msg("GET /1 HTTP/1.1", "Host: x")+"\r\n"+nextReq)
	l.add("leading-crlf-many", "\r\n\r\n\r\n"+msg("GET /1 HTTP/1.1", "Host: x"))
	l.add("leading-lf", "\n"+msg("GET /1 HTTP/1.1", "Host: x"))
	l.add("pipeline-partial-second", msg("GET /1 HTTP/1.1", "Host: x")+"GET /2 HTTP/1.1\r\nHost: x\r\n")

	// Headers.
	l.add("header-repeated", msg("GET / HTTP/1.1", "Host: x", "X-A: 1", "X-A: 2", "Accept: a", "Accept: b", "Accept: c"))
	l.add("header-repeated-case", msg("GET / HTTP/1.1", "Host: x", "x-a: 1", "X-A: 2", "X-a: 3"))
	l.add("header-cookies", msg("GET / HTTP/1.1", "Host: x", "Cookie: a=1", "Cookie: b=2; c=3"))
	l.add("header-names-lower", msg("get / HTTP/1.1", "host: x", "content-length: 2", "x-lower: v", "content-type: text/plain")+"ab")
	l.add("header-names-upper", msg("GET / HTTP/1.1", "HOST: x", "CONTENT-LENGTH: 2", "X-UPPER: v", "USER-AGENT: u")+"ab")
	l.add("header-names-mixed", msg("GET / HTTP/1.1", "hOsT: x", "cOnTeNt-LeNgTh: 2", "x-MiXeD-cAsE: v")+"ab")
	l.add("header-name-underscore", msg("GET / HTTP/1.1", "Host: x", "x_under_score: v", "X-Under-Score: w"))
	l.add("header-name-digits", msg("GET / HTTP/1.1", "Host: x", "1-2-3: v", "x-1a: w"))
	l.add("header-name-tchars", msg("GET / HTTP/1.1", "Host: x", "x!#$%&'*+.^_`|~: v"))
	l.add("header-name-long", msg("GET / HTTP/1.1", "Host: x", "X-"+strings.Repeat("long-", 30)+"name: v"))
	l.add("header-te-lower-chunked", msg("POST / HTTP/1.1", "Host: x", "transfer-encoding: chunked")+chunkedHello)
	l.add("header-ows-spaces", msg("GET / HTTP/1.1", "Host: x", "X-A:    v   "))
	l.add("header-ows-tabs", msg("GET / HTTP/1.1", "Host: x", "X-A:\tv\t"))
	l.add("header-ows-mixed", msg("GET / HTTP/1.1", "Host: x", "X-A: \t v \t "))
	l.add("header-no-space", msg("GET / HTTP/1.1", "Host:x", "X-A:v"))
	l.add("header-inner-spaces", msg("GET / HTTP/1.1", "Host: x", "X-A: a  b\tc"))
	l.add("header-empty-value", msg("GET / HTTP/1.1", "Host: x", "X-A:", "X-B: ", "X-C:\t"))
	l.add("header-value-colons", msg("GET / HTTP/1.1", "Host: x", "X-A: a:b::c"))
	l.add("header-value-high-bytes", msg("GET / HTTP/1.1", "Host: x", "X-A: caf\xc3\xa9 \xff\x80"))
	l.add("header-value-long", msg("GET / HTTP/1.1", "Host: x", "X-A: "+strings.Repeat("v", 16<<10)))
	l.add("header-many-100", msg(append([]string{"GET / HTTP/1.1", "Host: x"}, manyHeaders(100)...)...))
	l.add("header-many-1000", msg(append([]string{"GET / HTTP/1.1", "Host: x"}, manyHeaders(1000)...)...))
	l.add("header-pragma-no-cache", msg("GET / HTTP/1.1", "Host: x", "Pragma: no-cache"))
	l.add("header-pragma-with-cache-control", msg("GET / HTTP/1.1", "Host: x", "Pragma: no-cache", "Cache-Control: max-age=1"))
	l.add("header-user-agent-empty", msg("GET / HTTP/1.1", "Host: x", "User-Agent:"))
	l.add("header-upgrade-h2c", msg("GET / HTTP/1.1", "Host: x", "Connection: Upgrade, HTTP2-Settings", "Upgrade: h2c", "HTTP2-Settings: AAMAAABkAARAAAAAAAIAAAAA"))
	l.add("header-te-trailers", msg("GET / HTTP/1.1", "Host: x", "TE: trailers"))
	l.add("prior-knowledge-h2", "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n")
}

func manyHeaders(n int) []string {
	h := make([]string, n)
	for i := range h {
		h[i] = fmt.Sprintf("X-H%d: value-%d", i, i)
	}
	return h
}

// bodyCases: Content-Length, chunked bodies, trailers, Expect, forms.
func bodyCases(l *caseList) {
	l.add("cl-5", msg("POST / HTTP/1.1", "Host: x", "Content-Length: 5")+"hello")
	l.add("cl-0", msg("POST / HTTP/1.1", "Host: x", "Content-Length: 0"))
	l.add("cl-0-pipelined", msg("POST / HTTP/1.1", "Host: x", "Content-Length: 0")+nextReq)
	l.add("cl-10-http10", msg("POST / HTTP/1.0", "Content-Length: 10")+"0123456789")
	l.add("cl-big-100k", msg("PUT /big HTTP/1.1", "Host: x", "Content-Length: 102400")+strings.Repeat("x", 102400))
	l.add("cl-binary", msg("POST / HTTP/1.1", "Host: x", "Content-Length: 8")+"\x00\x01\r\n\xff\xfe\r\n")
	l.add("cl-body-looks-like-request", msg("POST / HTTP/1.1", "Host: x", "Content-Length: 33")+nextReq)
	l.add("cl-short-body", msg("POST / HTTP/1.1", "Host: x", "Content-Length: 10")+"hello")
	l.add("cl-long-body", msg("POST / HTTP/1.1", "Host: x", "Content-Length: 3")+"hello")
	l.add("cl-leading-zeros", msg("POST / HTTP/1.1", "Host: x", "Content-Length: 005")+"hello")
	l.add("cl-dup-same", msg("POST / HTTP/1.1", "Host: x", "Content-Length: 5", "Content-Length: 5")+"hello"+nextReq)
	l.add("cl-no-body-method", msg("GET / HTTP/1.1", "Host: x", "Content-Length: 5")+"hello"+nextReq)
	l.add("cl-head-with-body", msg("HEAD / HTTP/1.1", "Host: x", "Content-Length: 5")+"hello"+nextReq)
	l.add("no-framing-body-bytes", msg("POST / HTTP/1.1", "Host: x")+"hello")
	l.add("no-framing-10-body", msg("POST / HTTP/1.0")+"hello")

	l.add("chunked-simple", msg("POST / HTTP/1.1", "Host: x", "Transfer-Encoding: chunked")+chunkedHello)
	l.add("chunked-multi", msg("POST / HTTP/1.1", "Host: x", "Transfer-Encoding: chunked")+"1\r\na\r\n2\r\nbc\r\n3\r\ndef\r\n0\r\n\r\n")
	l.add("chunked-upper-hex", msg("POST / HTTP/1.1", "Host: x", "Transfer-Encoding: chunked")+"A\r\n0123456789\r\n0\r\n\r\n")
	l.add("chunked-lower-hex", msg("POST / HTTP/1.1", "Host: x", "Transfer-Encoding: chunked")+"a\r\n0123456789\r\n0\r\n\r\n")
	l.add("chunked-leading-zeros", msg("POST / HTTP/1.1", "Host: x", "Transfer-Encoding: chunked")+"0005\r\nhello\r\n0\r\n\r\n")
	l.add("chunked-leading-zeros-16", msg("POST / HTTP/1.1", "Host: x", "Transfer-Encoding: chunked")+"0000000000000005\r\nhello\r\n0\r\n\r\n")
	l.add("chunked-empty", msg("POST / HTTP/1.1", "Host: x", "Transfer-Encoding: chunked")+"0\r\n\r\n"+nextReq)
	l.add("chunked-ext", msg("POST / HTTP/1.1", "Host: x", "Transfer-Encoding: chunked")+"5;a=b\r\nhello\r\n0\r\n\r\n")
	l.add("chunked-ext-quoted", msg("POST / HTTP/1.1", "Host: x", "Transfer-Encoding: chunked")+"5;a=\"b;c\"\r\nhello\r\n0\r\n\r\n")
	l.add("chunked-ext-name-only", msg("POST / HTTP/1.1", "Host: x", "Transfer-Encoding: chunked")+"5;a;b\r\nhello\r\n0\r\n\r\n")
	l.add("chunked-ext-last-chunk", msg("POST / HTTP/1.1", "Host: x", "Transfer-Encoding: chunked")+"5\r\nhello\r\n0;end=1\r\n\r\n")
	l.add("chunked-ext-bws", msg("POST / HTTP/1.1", "Host: x", "Transfer-Encoding: chunked")+"5 ;a=b\r\nhello\r\n0\r\n\r\n")
	l.add("chunked-ext-tab", msg("POST / HTTP/1.1", "Host: x", "Transfer-Encoding: chunked")+"5\t;a=b\r\nhello\r\n0\r\n\r\n")
	l.add("chunked-size-trailing-space", msg("POST / HTTP/1.1", "Host: x", "Transfer-Encoding: chunked")+"5 \r\nhello\r\n0\r\n\r\n")
	l.add("chunked-size-leading-space", msg("POST / HTTP/1.1", "Host: x", "Transfer-Encoding: chunked")+" 5\r\nhello\r\n0\r\n\r\n")
	l.add("chunked-big", msg("POST / HTTP/1.1", "Host: x", "Transfer-Encoding: chunked")+"8000\r\n"+strings.Repeat("y", 0x8000)+"\r\n10000\r\n"+strings.Repeat("z", 0x10000)+"\r\n0\r\n\r\n")
	l.add("chunked-trailer-declared", msg("POST / HTTP/1.1", "Host: x", "Transfer-Encoding: chunked", "Trailer: X-T")+"5\r\nhello\r\n0\r\nX-T: v\r\n\r\n"+nextReq)
	l.add("chunked-trailer-declared-two", msg("POST / HTTP/1.1", "Host: x", "Transfer-Encoding: chunked", "Trailer: X-T, x-u")+"5\r\nhello\r\n0\r\nX-T: v\r\nX-U: w\r\n\r\n")
	l.add("chunked-trailer-declared-missing", msg("POST / HTTP/1.1", "Host: x", "Transfer-Encoding: chunked", "Trailer: X-T")+chunkedHello)
	l.add("chunked-trailer-undeclared", msg("POST / HTTP/1.1", "Host: x", "Transfer-Encoding: chunked")+"5\r\nhello\r\n0\r\nX-T: v\r\n\r\n"+nextReq)
	l.add("chunked-trailer-other-than-declared", msg("POST / HTTP/1.1", "Host: x", "Transfer-Encoding: chunked", "Trailer: X-T")+"5\r\nhello\r\n0\r\nX-U: v\r\n\r\n")
	l.add("chunked-trailer-repeated", msg("POST / HTTP/1.1", "Host: x", "Transfer-Encoding: chunked")+"5\r\nhello\r\n0\r\nX-T: 1\r\nX-T: 2\r\n\r\n")
	l.add("chunked-trailer-content-length", msg("POST / HTTP/1.1", "Host: x", "Transfer-Encoding: chunked")+"5\r\nhello\r\n0\r\nContent-Length: 50\r\n\r\n"+nextReq)
	l.add("chunked-trailer-declares-cl", msg("POST / HTTP/1.1", "Host: x", "Transfer-Encoding: chunked", "Trailer: Content-Length")+chunkedHello)
	l.add("chunked-trailer-declares-te", msg("POST / HTTP/1.1", "Host: x", "Transfer-Encoding: chunked", "Trailer: Transfer-Encoding")+chunkedHello)
	l.add("trailer-header-without-chunked", msg("POST / HTTP/1.1", "Host: x", "Content-Length: 5", "Trailer: X-T")+"hello")
	l.add("chunked-trailer-no-colon", msg("POST / HTTP/1.1", "Host: x", "Transfer-Encoding: chunked")+"5\r\nhello\r\n0\r\nX-T\r\n\r\n"+nextReq)
	l.add("chunked-trailer-bad-name", msg("POST / HTTP/1.1", "Host: x", "Transfer-Encoding: chunked")+"5\r\nhello\r\n0\r\nX T: v\r\n\r\n"+nextReq)
	l.add("chunked-trailer-ctl-value", msg("POST / HTTP/1.1", "Host: x", "Transfer-Encoding: chunked")+"5\r\nhello\r\n0\r\nX-T: a\x01b\r\n\r\n"+nextReq)
	l.add("chunked-trailer-obs-fold", msg("POST / HTTP/1.1", "Host: x", "Transfer-Encoding: chunked")+"5\r\nhello\r\n0\r\nX-T: a\r\n b\r\n\r\n"+nextReq)
	l.add("chunked-trailer-bare-lf", msg("POST / HTTP/1.1", "Host: x", "Transfer-Encoding: chunked")+"5\r\nhello\r\n0\r\nX-T: v\n\r\n"+nextReq)
	l.add("chunked-no-final-crlf", msg("POST / HTTP/1.1", "Host: x", "Transfer-Encoding: chunked")+"5\r\nhello\r\n0\r\n")
	l.add("chunked-unfinished", msg("POST / HTTP/1.1", "Host: x", "Transfer-Encoding: chunked")+"5\r\nhello\r\n")

	l.add("expect-continue", msg("POST / HTTP/1.1", "Host: x", "Expect: 100-continue", "Content-Length: 5")+"hello")
	l.add("expect-continue-noread", msg("POST / HTTP/1.1", "Host: x", "Expect: 100-continue", "Content-Length: 5", "X-Act: noread")+"hello"+nextReq)
	l.add("expect-continue-cl0", msg("POST / HTTP/1.1", "Host: x", "Expect: 100-continue", "Content-Length: 0")+nextReq)
	l.add("expect-continue-no-body", msg("GET / HTTP/1.1", "Host: x", "Expect: 100-continue")+nextReq)
	l.add("expect-continue-chunked", msg("POST / HTTP/1.1", "Host: x", "Expect: 100-continue", "Transfer-Encoding: chunked")+chunkedHello)
	l.add("expect-continue-10", msg("POST / HTTP/1.0", "Expect: 100-continue", "Content-Length: 5")+"hello")
	l.add("expect-continue-mixed-case", msg("POST / HTTP/1.1", "Host: x", "Expect: 100-Continue", "Content-Length: 5")+"hello")
	l.add("expect-continue-ows", msg("POST / HTTP/1.1", "Host: x", "Expect:   100-continue  ", "Content-Length: 5")+"hello")
	l.add("expect-unknown", msg("POST / HTTP/1.1", "Host: x", "Expect: foo", "Content-Length: 5")+"hello")
	l.add("expect-list", msg("POST / HTTP/1.1", "Host: x", "Expect: foo, 100-continue", "Content-Length: 5")+"hello")
	l.add("expect-two-headers", msg("POST / HTTP/1.1", "Host: x", "Expect: 100-continue", "Expect: 100-continue", "Content-Length: 5")+"hello")
	l.add("expect-empty", msg("POST / HTTP/1.1", "Host: x", "Expect:", "Content-Length: 5")+"hello")
	l.add("expect-unknown-10", msg("GET / HTTP/1.0", "Expect: foo"))

	l.add("form-post", msg("POST /f?q=1 HTTP/1.1", "Host: x", "Content-Type: application/x-www-form-urlencoded", "Content-Length: 11", "X-Act: form")+"a=1&b=2+3&q")
	l.add("form-query-only", msg("GET /f?a=1&a=2&b=%20 HTTP/1.1", "Host: x", "X-Act: form"))
	l.add("form-put-chunked", msg("PUT /f HTTP/1.1", "Host: x", "Content-Type: application/x-www-form-urlencoded", "Transfer-Encoding: chunked", "X-Act: form")+"3\r\na=1\r\n0\r\n\r\n")
	l.add("form-bad-escape", msg("POST /f HTTP/1.1", "Host: x", "Content-Type: application/x-www-form-urlencoded", "Content-Length: 5", "X-Act: form")+"a=%zz")
	l.add("form-semicolon", msg("GET /f?a=1;b=2 HTTP/1.1", "Host: x", "X-Act: form"))
	l.add("noread-body-drained", msg("POST / HTTP/1.1", "Host: x", "Content-Length: 5", "X-Act: noread")+"hello"+nextReq)
	l.add("noread-chunked-drained", msg("POST / HTTP/1.1", "Host: x", "Transfer-Encoding: chunked", "X-Act: noread")+chunkedHello+nextReq)
	l.add("noread-big-body", msg("POST / HTTP/1.1", "Host: x", "Content-Length: 300000", "X-Act: noread")+strings.Repeat("q", 300000)+nextReq)
}

// smugglingCases: ambiguous framing, each followed by a request a
// desynchronised server would serve.
func smugglingCases(l *caseList) {
	te := func(name string, lines ...string) {
		h := append([]string{"POST /te HTTP/1.1", "Host: x"}, lines...)
		l.add(name, msg(h...)+chunkedHello+nextReq)
	}
	// Both framings.
	l.add("cl-te", msg("POST / HTTP/1.1", "Host: x", "Content-Length: 6", "Transfer-Encoding: chunked")+"0\r\n\r\nGET /smuggled HTTP/1.1\r\nHost: x\r\n\r\n")
	l.add("te-cl", msg("POST / HTTP/1.1", "Host: x", "Transfer-Encoding: chunked", "Content-Length: 4")+"5c\r\nGPOST / HTTP/1.1\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: 15\r\n\r\nx=1\r\n0\r\n\r\n")
	l.add("cl-te-cl0", msg("POST / HTTP/1.1", "Host: x", "Content-Length: 0", "Transfer-Encoding: chunked")+chunkedHello+nextReq)
	l.add("te-cl-matching", msg("POST / HTTP/1.1", "Host: x", "Transfer-Encoding: chunked", "Content-Length: 15")+chunkedHello+nextReq)

	// Transfer-Encoding obfuscations.
	te("te-xchunked", "Transfer-Encoding: xchunked")
	te("te-leading-space", "Transfer-Encoding:  chunked")
	te("te-trailing-space", "Transfer-Encoding: chunked ")
	te("te-leading-tab", "Transfer-Encoding:\tchunked")
	te("te-no-space", "Transfer-Encoding:chunked")
	te("te-chunked-identity", "Transfer-Encoding: chunked, identity")
	te("te-identity-chunked", "Transfer-Encoding: identity, chunked")
	te("te-gzip-chunked", "Transfer-Encoding: gzip, chunked")
	te("te-chunked-chunked", "Transfer-Encoding: chunked, chunked")
	te("te-identity", "Transfer-Encoding: identity")
	te("te-gzip", "Transfer-Encoding: gzip")
	te("te-empty", "Transfer-Encoding:")
	te("te-chunked-comma", "Transfer-Encoding: chunked,")
	te("te-comma-chunked", "Transfer-Encoding: ,chunked")
	te("te-space-before-colon", "Transfer-Encoding : chunked")
	te("te-quoted", "Transfer-Encoding: \"chunked\"")
	te("te-two-headers", "Transfer-Encoding: chunked", "Transfer-Encoding: chunked")
	te("te-two-headers-identity", "Transfer-Encoding: identity", "Transfer-Encoding: chunked")
	te("te-two-headers-chunked-first", "Transfer-Encoding: chunked", "Transfer-Encoding: identity")
	te("te-upper", "Transfer-Encoding: CHUNKED")
	te("te-mixed-case", "Transfer-Encoding: ChUnKeD")
	te("te-name-lower", "transfer-encoding: chunked")
	te("te-name-underscore", "Transfer_Encoding: chunked", "Content-Length: 15")
	te("te-chunk", "Transfer-Encoding: chunk")
	te("te-chunked-param", "Transfer-Encoding: chunked;q=1")
	te("te-vertical-tab", "Transfer-Encoding:\x0bchunked")
	te("te-form-feed", "Transfer-Encoding: chunked\x0c")
	te("te-nul", "Transfer-Encoding: chunked\x00")
	te("te-bare-cr-value", "Transfer-Encoding: chunked\rX: y")
	te("te-obs-fold", "Transfer-Encoding:", " chunked")
	te("te-obs-fold-tab", "X-A: a", "\tTransfer-Encoding: chunked")
	l.add("te-lf-before-colon", "POST /te HTTP/1.1\r\nHost: x\r\nTransfer-Encoding\n: chunked\r\n\r\n"+chunkedHello+nextReq)
	l.add("te-bare-lf-fold", "POST /te HTTP/1.1\r\nHost: x\r\nTransfer-Encoding:\n chunked\r\n\r\n"+chunkedHello+nextReq)
	l.add("te-http10", msg("POST /te HTTP/1.0", "Transfer-Encoding: chunked")+chunkedHello)
	l.add("te-http10-with-cl", msg("POST /te HTTP/1.0", "Transfer-Encoding: chunked", "Content-Length: 5")+"hello")
	l.add("te-http10-keep-alive", msg("POST /te HTTP/1.0", "Connection: keep-alive", "Transfer-Encoding: chunked")+chunkedHello+msg("GET /next HTTP/1.0"))
	l.add("te-http10-keep-alive-cl", msg("POST /te HTTP/1.0", "Connection: keep-alive", "Transfer-Encoding: chunked", "Content-Length: 15")+chunkedHello+msg("GET /next HTTP/1.0"))
	l.add("te-cl-obfuscated-te", msg("POST / HTTP/1.1", "Host: x", "Content-Length: 15", "Transfer-Encoding: xchunked")+chunkedHello+nextReq)

	// Content-Length variants.
	cl := func(name string, lines ...string) {
		h := append([]string{"POST /cl HTTP/1.1", "Host: x"}, lines...)
		l.add(name, msg(h...)+"hello"+nextReq)
	}
	cl("cl-conflicting", "Content-Length: 5", "Content-Length: 6")
	cl("cl-conflicting-list", "Content-Length: 5, 6")
	cl("cl-list-same", "Content-Length: 5, 5")
	cl("cl-dup-one-empty", "Content-Length: 5", "Content-Length:")
	cl("cl-plus", "Content-Length: +5")
	cl("cl-minus", "Content-Length: -1")
	cl("cl-minus-zero", "Content-Length: -0")
	cl("cl-spaces", "Content-Length:  5 ")
	cl("cl-tabs", "Content-Length:\t5\t")
	cl("cl-inner-space", "Content-Length: 5 5")
	cl("cl-hex", "Content-Length: 0x5")
	cl("cl-decimal-point", "Content-Length: 5.0")
	cl("cl-exponent", "Content-Length: 5e0")
	cl("cl-underscore", "Content-Length: 0_5")
	cl("cl-empty", "Content-Length:")
	cl("cl-letters", "Content-Length: five")
	cl("cl-2pow63-minus-1", "Content-Length: 9223372036854775807")
	cl("cl-2pow63", "Content-Length: 9223372036854775808")
	cl("cl-2pow64", "Content-Length: 18446744073709551616")
	cl("cl-huge", "Content-Length: 99999999999999999999999999999")
	cl("cl-19-digits", "Content-Length: 1000000000000000000")
	cl("cl-leading-zeros-20", "Content-Length: 00000000000000000005")
	cl("cl-nul", "Content-Length: 5\x00")
	cl("cl-vertical-tab", "Content-Length: 5\x0b")
	cl("cl-space-before-colon", "Content-Length : 5")
	cl("cl-obs-fold", "Content-Length:", " 5")
	cl("cl-two-zero-and-five", "Content-Length: 0", "Content-Length: 5")
	cl("cl-name-underscore", "Content_Length: 5")

	// Chunk sizes and chunk lines.
	ch := func(name, body string) {
		l.add(name, msg("POST /ch HTTP/1.1", "Host: x", "Transfer-Encoding: chunked")+body+nextReq)
	}
	ch("chunk-size-overflow", "10000000000000005\r\nhello\r\n0\r\n\r\n")
	ch("chunk-size-16-f", "ffffffffffffffff\r\nhello\r\n0\r\n\r\n")
	ch("chunk-size-15-f", "fffffffffffffff\r\nhello\r\n0\r\n\r\n")
	ch("chunk-size-0x", "0x5\r\nhello\r\n0\r\n\r\n")
	ch("chunk-size-negative", "-5\r\nhello\r\n0\r\n\r\n")
	ch("chunk-size-plus", "+5\r\nhello\r\n0\r\n\r\n")
	ch("chunk-size-empty", "\r\nhello\r\n0\r\n\r\n")
	ch("chunk-size-not-hex", "g\r\nhello\r\n0\r\n\r\n")
	ch("chunk-size-underscore", "0_5\r\nhello\r\n0\r\n\r\n")
	ch("chunk-ext-bare-cr", "5;a\rb\r\nhello\r\n0\r\n\r\n")
	ch("chunk-ext-bare-lf", "5;a\nb\r\nhello\r\n0\r\n\r\n")
	ch("chunk-ext-nul", "5;a=\x00\r\nhello\r\n0\r\n\r\n")
	ch("chunk-ext-high-bytes", "5;a=\xc3\xa9\r\nhello\r\n0\r\n\r\n")
	ch("chunk-ext-long", "5;"+strings.Repeat("a", 5000)+"\r\nhello\r\n0\r\n\r\n")
	ch("chunk-ext-empty-semicolon", "5;\r\nhello\r\n0\r\n\r\n")
	ch("chunk-data-no-crlf", "5\r\nhelloX\r\n0\r\n\r\n")
	ch("chunk-data-bare-lf", "5\r\nhello\n0\r\n\r\n")
	ch("chunk-data-bare-cr", "5\r\nhello\r0\r\n\r\n")
	ch("chunk-data-too-short", "6\r\nhello\r\n0\r\n\r\n")
	ch("chunk-size-bare-lf", "5\nhello\r\n0\r\n\r\n")
	ch("chunk-last-bare-lf", "5\r\nhello\r\n0\n\r\n")
	ch("chunk-end-bare-lf", "5\r\nhello\r\n0\r\n\n")
	ch("chunk-size-bare-cr", "5\rhello\r\n0\r\n\r\n")
	ch("chunk-crlf-in-size", "5\r\r\nhello\r\n0\r\n\r\n")
}

// malformedCases: request lines, header lines and line ends.
func malformedCases(l *caseList) {
	l.add("line-header-space-in-name", msg("GET / HTTP/1.1", "Host: x", "X Y: z"))
	l.add("line-header-high-byte-name", msg("GET / HTTP/1.1", "Host: x", "X\x80: y"))
	l.add("line-header-nul-name", msg("GET / HTTP/1.1", "Host: x", "X\x00Y: z"))
	l.add("line-header-slash-name", msg("GET / HTTP/1.1", "Host: x", "X/Y: z"))
	l.add("line-header-brace-name", msg("GET / HTTP/1.1", "Host: x", "X{Y}: z"))
	l.add("line-header-nul-value", msg("GET / HTTP/1.1", "Host: x", "X-A: a\x00b"))
	l.add("line-header-cr-value", msg("GET / HTTP/1.1", "Host: x", "X-A: a\rb"))
	l.add("line-header-del-value", msg("GET / HTTP/1.1", "Host: x", "X-A: a\x7fb"))
	l.add("line-header-ctl-value", msg("GET / HTTP/1.1", "Host: x", "X-A: a\x01b"))
	l.add("line-header-esc-value", msg("GET / HTTP/1.1", "Host: x", "X-A: \x1b[31m"))
	l.add("line-header-no-colon", msg("GET / HTTP/1.1", "Host: x", "X-A"))
	l.add("line-header-empty-name", msg("GET / HTTP/1.1", "Host: x", ": v"))
	l.add("line-header-only-colon", msg("GET / HTTP/1.1", "Host: x", ":"))
	l.add("line-header-leading-space-first", msg("GET / HTTP/1.1", " Host: x"))
	l.add("line-obs-fold", msg("GET / HTTP/1.1", "Host: x", "X-A: a", " b"))
	l.add("line-obs-fold-tab", msg("GET / HTTP/1.1", "Host: x", "X-A: a", "\tb"))
	l.add("line-obs-fold-empty-first", msg("GET / HTTP/1.1", "Host: x", "X-A:", "  b"))
	l.add("line-obs-fold-host", msg("GET / HTTP/1.1", "Host:", " x"))
	l.add("line-obs-fold-connection-close", msg("GET / HTTP/1.1", "Host: x", "Connection: keep-alive,", " close")+nextReq)
	l.add("line-bare-lf-all", "GET /lf HTTP/1.1\nHost: x\nX-A: b\n\n")
	l.add("line-bare-lf-all-pipelined", "GET /lf HTTP/1.1\nHost: x\n\nGET /lf2 HTTP/1.1\nHost: x\n\n")
	l.add("line-bare-lf-request-line", "GET /lf HTTP/1.1\nHost: x\r\n\r\n")
	l.add("line-bare-lf-header", "GET /lf HTTP/1.1\r\nHost: x\nX-A: b\r\n\r\n")
	l.add("line-bare-lf-end", "GET /lf HTTP/1.1\r\nHost: x\r\n\n")
	l.add("line-bare-lf-mixed", "GET /lf HTTP/1.1\r\nHost: x\nX-A: b\n\r\n")
	l.add("line-bare-lf-body", "POST /lf HTTP/1.1\nHost: x\nContent-Length: 5\n\nhello")
	l.add("line-bare-lf-te", "POST /lf HTTP/1.1\nHost: x\nTransfer-Encoding: chunked\n\n"+chunkedHello)
	l.add("line-bare-cr-all", "GET /cr HTTP/1.1\rHost: x\r\r")
	l.add("line-bare-cr-request-line", "GET /cr HTTP/1.1\rHost: x\r\n\r\n")
	l.add("line-bare-cr-header", "GET /cr HTTP/1.1\r\nHost: x\rX-A: b\r\n\r\n")
	l.add("line-cr-cr-lf", "GET /cr HTTP/1.1\r\r\nHost: x\r\n\r\n")
	l.add("line-lf-cr", "GET /cr HTTP/1.1\n\rHost: x\r\n\r\n")

	rl := func(name, line string) { l.add(name, msg(line, "Host: x")) }
	rl("reqline-double-space-1", "GET  / HTTP/1.1")
	rl("reqline-double-space-2", "GET /  HTTP/1.1")
	rl("reqline-trailing-space", "GET / HTTP/1.1 ")
	rl("reqline-leading-space", " GET / HTTP/1.1")
	rl("reqline-tabs", "GET\t/\tHTTP/1.1")
	rl("reqline-tab-in-target", "GET /a\tb HTTP/1.1")
	rl("reqline-space-in-target", "GET /a b HTTP/1.1")
	rl("reqline-no-version", "GET /")
	rl("reqline-no-target", "GET HTTP/1.1")
	rl("reqline-empty-method", " / HTTP/1.1")
	rl("reqline-method-slash", "GE/T / HTTP/1.1")
	rl("reqline-method-high-byte", "G\xc3\x89T / HTTP/1.1")
	rl("reqline-method-nul", "GE\x00T / HTTP/1.1")
	rl("reqline-nul-target", "GET /a\x00b HTTP/1.1")
	rl("reqline-del-target", "GET /a\x7fb HTTP/1.1")
	rl("version-1.2", "GET / HTTP/1.2")
	rl("version-1.9", "GET / HTTP/1.9")
	rl("version-1.10", "GET / HTTP/1.10")
	rl("version-2.0", "GET / HTTP/2.0")
	rl("version-3.0", "GET / HTTP/3.0")
	rl("version-0.9", "GET / HTTP/0.9")
	rl("version-lower", "GET / http/1.1")
	rl("version-1", "GET / HTTP/1")
	rl("version-1.1.1", "GET / HTTP/1.1.1")
	rl("version-1.a", "GET / HTTP/1.a")
	rl("version-01.1", "GET / HTTP/01.1")
	rl("version-spaces", "GET / HTTP/ 1.1")
	rl("version-garbage", "GET / FOO/1.1")
	l.add("version-0.9-simple", "GET /\r\n\r\n")
	l.add("garbage-binary", "\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03\r\n\r\n")
	l.add("garbage-line", "hello\r\n\r\n")
	l.add("empty-lines-only", "\r\n\r\n\r\n\r\n\r\n\r\n")
	l.add("header-block-huge", msg("GET / HTTP/1.1", "Host: x", "X-A: "+strings.Repeat("v", 1100<<10)))
}

// unicodeCases: look-alikes of the framing tokens, as UTF-8 bytes. K is
// U+212A KELVIN SIGN (folds to k), ſ U+017F LONG S (folds to s); the
// spaces are Unicode white space that strings.TrimSpace would trim.
func unicodeCases(l *caseList) {
	spaces := map[string]string{
		"nbsp": "\u00a0", "nel": "\u0085", "ideographic": "\u3000", "bom": "\ufeff",
		"line-sep": "\u2028", "en-quad": "\u2000", "zwsp": "\u200b",
	}
	names := []string{"bom", "en-quad", "ideographic", "line-sep", "nbsp", "nel", "zwsp"}

	te := func(name, v string) {
		l.add("uni-te-"+name, msg("POST /te HTTP/1.1", "Host: x", "Transfer-Encoding: "+v)+chunkedHello+nextReq)
	}
	te("kelvin", "chun\u212aed")
	te("kelvin-upper", "CHUN\u212aED")
	te("fullwidth", "\uff43\uff48\uff55\uff4e\uff4b\uff45\uff44")
	te("fullwidth-c", "\uff43hunked")
	te("long-s-identity", "identity, chunked\u017f")
	for _, n := range names {
		te("trailing-"+n, "chunked"+spaces[n])
		te("leading-"+n, spaces[n]+"chunked")
	}
	l.add("uni-te-kelvin-with-cl", msg("POST /te HTTP/1.1", "Host: x", "Content-Length: 15", "Transfer-Encoding: chun\u212aed")+chunkedHello+nextReq)
	l.add("uni-te-nbsp-with-cl", msg("POST /te HTTP/1.1", "Host: x", "Content-Length: 15", "Transfer-Encoding: chunked\u00a0")+chunkedHello+nextReq)

	cl := func(name, v string) {
		l.add("uni-cl-"+name, msg("POST /cl HTTP/1.1", "Host: x", "Content-Length: "+v)+"hello"+nextReq)
	}
	for _, n := range names {
		cl("trailing-"+n, "5"+spaces[n])
		cl("leading-"+n, spaces[n]+"5")
	}
	cl("arabic-indic", "\u0665")
	cl("devanagari", "\u096b")
	cl("fullwidth", "\uff15")
	cl("superscript", "\u2075")
	cl("mixed-arabic", "1\u0660")

	conn := func(name, proto, v string) {
		l.add("uni-conn-"+name, msg("GET /c HTTP/"+proto, "Host: x", "Connection: "+v)+msg("GET /c2 HTTP/"+proto, "Host: x"))
	}
	conn("keep-alive-kelvin-10", "1.0", "\u212aeep-alive")
	conn("keep-alive-kelvin-upper-10", "1.0", "\u212aEEP-ALIVE")
	conn("keep-alive-nbsp-10", "1.0", "keep-alive\u00a0")
	conn("keep-alive-nel-10", "1.0", "\u0085keep-alive")
	conn("keep-alive-ideographic-10", "1.0", "keep-alive\u3000")
	conn("keep-alive-list-kelvin-10", "1.0", "foo, \u212aeep-alive")
	conn("close-long-s", "1.1", "clo\u017fe")
	conn("close-long-s-upper", "1.1", "CLO\u017fE")
	conn("close-nbsp", "1.1", "close\u00a0")
	conn("close-nel", "1.1", "\u0085close")
	conn("close-line-sep", "1.1", "close\u2028")
	conn("close-list-nbsp", "1.1", "foo,\u00a0close")
	conn("close-fullwidth", "1.1", "\uff43lose")
	l.add("uni-conn-keep-alive-folded-10", msg("GET /c HTTP/1.0", "Connection:", " keep-alive")+msg("GET /c2 HTTP/1.0"))
	l.add("uni-conn-keep-alive-folded-nbsp-10", msg("GET /c HTTP/1.0", "Connection: foo,", "\u00a0keep-alive")+msg("GET /c2 HTTP/1.0"))

	exp := func(name, v string) {
		l.add("uni-expect-"+name, msg("POST /e HTTP/1.1", "Host: x", "Expect: "+v, "Content-Length: 5")+"hello")
	}
	exp("trailing-nbsp", "100-continue\u00a0")
	exp("leading-nel", "\u0085100-continue")
	exp("trailing-ideographic", "100-continue\u3000")
	exp("fullwidth-digits", "\uff11\uff10\uff10-continue")
	exp("long-s", "100-continue\u017f")
	exp("kelvin", "100-\u212aontinue")
	exp("dotless-i", "100-cont\u0131nue")
	exp("dotted-capital-i", "100-CONT\u0130NUE")

	hdr := func(name, line string) {
		l.add("uni-name-"+name, msg("POST /n HTTP/1.1", "Host: x", line)+chunkedHello+nextReq)
	}
	hdr("keep-alive-kelvin", "\u212aeep-Alive: timeout=5")
	hdr("te-long-s", "Tran\u017ffer-Encoding: chunked")
	hdr("te-nbsp", "Transfer-Encoding\u00a0: chunked")
	hdr("te-fullwidth", "\uff34ransfer-Encoding: chunked")
	hdr("cl-long-s", "Content-Length\u017f: 15")
	hdr("expect-nbsp", "Expect\u00a0: 100-continue")
	hdr("connection-nel", "\u0085Connection: close")
	l.add("uni-name-host-kelvin", msg("GET / HTTP/1.1", "Host: x", "Hos\u212a: y"))
	l.add("uni-value-plain", msg("GET / HTTP/1.1", "Host: x", "X-A: \u212a\u017f\u00a0\u3000"))
}

// hostCases: the Host header (RFC 9112 section 3.2, net/http's check of
// its bytes).
func hostCases(l *caseList) {
	host := func(name, v string) { l.add("host-"+name, msg("GET /h HTTP/1.1", "Host: "+v)) }
	for _, c := range []struct{ name, v string }{
		{"at", "a@b"}, {"hash", "a#b"}, {"caret", "a^b"}, {"pipe", "a|b"}, {"backtick", "a`b"},
		{"space", "a b"}, {"slash", "a/b"}, {"backslash", "a\\b"}, {"lt", "a<b"}, {"gt", "a>b"},
		{"dquote", "a\"b"}, {"lbrace", "a{b"}, {"rbrace", "a}b"}, {"non-ascii", "b\xc3\xbccher.example"},
		{"percent-escape", "a%41b"}, {"percent-bare", "a%"}, {"percent-bad", "a%zz"}, {"ipv6-port", "[::1]:80"},
		{"ipv6", "[::1]"}, {"ipv6-zone", "[fe80::1%25eth0]"}, {"ipv6-unclosed", "[::1"}, {"port", "a:1"},
		{"port-empty", "a:"}, {"port-only", ":80"}, {"port-letters", "a:b"}, {"two-colons", "a:1:2"},
		{"punycode", "xn--bcher-kva.example"}, {"underscore", "a_b"}, {"trailing-dot", "a.b."},
		{"upper", "EXAMPLE.COM"}, {"bang", "a!b"}, {"dollar", "a$b"}, {"amp", "a&b"}, {"quote", "a'b"},
		{"parens", "a(b)"}, {"star", "a*b"}, {"plus", "a+b"}, {"comma", "a,b"}, {"semicolon", "a;b"},
		{"equals", "a=b"}, {"tilde", "a~b"}, {"brackets-inner", "a[b]"}, {"tab-inner", "a\tb"},
		{"trailing-ows", "x \t"}, {"del", "a\x7fb"}, {"nbsp", "a\u00a0"}, {"userinfo", "u:p@a"},
		{"question", "a?b"}, {"long", strings.Repeat("a", 4000) + ".example"},
	} {
		host(c.name, c.v)
	}
	l.add("host-empty-11", msg("GET /h HTTP/1.1", "Host:"))
	l.add("host-empty-10", msg("GET /h HTTP/1.0", "Host:"))
	l.add("host-missing-11", msg("GET /h HTTP/1.1"))
	l.add("host-missing-10", msg("GET /h HTTP/1.0"))
	l.add("host-two-same", msg("GET /h HTTP/1.1", "Host: x", "Host: x"))
	l.add("host-two-different", msg("GET /h HTTP/1.1", "Host: x", "Host: y"))
	l.add("host-two-10", msg("GET /h HTTP/1.0", "Host: x", "Host: y"))
	l.add("host-list", msg("GET /h HTTP/1.1", "Host: x, y"))
	l.add("host-absolute-bad-header", msg("GET http://a.example/ HTTP/1.1", "Host: a@b"))
	l.add("host-absolute-empty-header", msg("GET http://a.example/ HTTP/1.1", "Host:"))
	l.add("host-absolute-bad-authority", msg("GET http://a^b/ HTTP/1.1", "Host: x"))
	l.add("host-absolute-userinfo-only", msg("GET http://u@/ HTTP/1.1", "Host: x"))
}

// responseCases: the ResponseWriter's contract, sniffing, framing, with
// GET and HEAD (and HTTP/1.0 for some).
func responseCases(l *caseList) {
	acts := []struct{ name, act string }{
		{"echo", ""},
		{"html-small", "html 100"},
		{"html-600", "html 600"},
		{"html-3k", "html 3000"},
		{"html-5k-one-write", "html 5000"},
		{"html-5k-parts", "html 5000 7"},
		{"html-64k", "html 65536 3"},
		{"bin-small", "bin 100"},
		{"bin-5k", "bin 5000"},
		{"bin-5k-parts", "bin 5000 50"},
		{"text-2047", "text 2047"},
		{"text-2048", "text 2048"},
		{"text-4096", "text 4096"},
		{"text-4097", "text 4097"},
		{"ws-then-html", "ws-html 200"},
		{"header-after-write", "latehdr"},
		{"header-after-writeheader", "afterwh"},
		{"header-map-kept", "keptmap"},
		{"writeheader-twice", "twice"},
		{"flush-between", "flush"},
		{"flush-first", "flushfirst 300"},
		{"flush-only", "flushonly"},
		{"serve-small", "serve 100"},
		{"serve-large", "serve 10000"},
		{"serve-html-sniffed", "servehtml 300"},
		{"serve-large-sniffed", "servehtml 9000"},
		{"serve-no-ext", "serve 100 f"},
		{"error-418", "error 418"},
		{"error-500", "error 500"},
		{"redirect-302", "redirect 302"},
		{"redirect-301-abs", "redirect 301 http://other.example/x"},
		{"redirect-307", "redirect 307 ../up"},
		{"cl-right", "cl 5 5"},
		{"cl-too-small", "cl 3 5"},
		{"cl-too-large", "cl 10 5"},
		{"cl-invalid", "cl x 5"},
		{"status-204", "status 204"},
		{"status-304", "status 304"},
		{"status-201", "status 201"},
		{"status-599", "status 599"},
		{"interim-103", "interim 103"},
		{"interim-100", "interim 100"},
		{"interim-199", "interim 199"},
		{"no-sniff-nil-type", "nosniff"},
		{"content-type-set", "ctype"},
		{"handler-connection-close", "connclose"},
		{"empty", "empty"},
		{"trailer", "trailer"},
		{"handler-te-header", "tehdr"},
		{"cookies", "cookie"},
	}
	for _, a := range acts {
		lines := func(m, proto string, extra ...string) string {
			h := []string{m + " /r/" + a.name + " " + proto, "Host: x"}
			if a.act != "" {
				h = append(h, "X-Act: "+a.act)
			}
			return msg(append(h, extra...)...)
		}
		l.add("resp-get-"+a.name, lines("GET", "HTTP/1.1")+nextReq)
		l.add("resp-head-"+a.name, lines("HEAD", "HTTP/1.1")+nextReq)
		switch a.name {
		case "echo", "html-5k-parts", "text-4097", "flush-between", "cl-too-large", "interim-103", "serve-large", "empty", "status-204":
			l.add("resp-get10-"+a.name, lines("GET", "HTTP/1.0"))
			l.add("resp-get10-keep-alive-"+a.name, lines("GET", "HTTP/1.0", "Connection: keep-alive")+"GET /next HTTP/1.0\r\n\r\n")
		}
	}
	ranges := []struct{ name, hdr string }{
		{"first", "Range: bytes=0-3"},
		{"suffix", "Range: bytes=-5"},
		{"open", "Range: bytes=9990-"},
		{"unsatisfiable", "Range: bytes=20000-"},
		{"malformed", "Range: bytes=x-y"},
		{"if-modified-since", "If-Modified-Since: " + diffModTime.Add(3600e9).Format(http.TimeFormat)},
		{"if-unmodified-since", "If-Unmodified-Since: " + diffModTime.Add(-3600e9).Format(http.TimeFormat)},
		{"if-range-stale", "Range: bytes=0-3\r\nIf-Range: " + diffModTime.Add(-3600e9).Format(http.TimeFormat)},
	}
	for _, r := range ranges {
		l.add("resp-range-"+r.name, msg("GET /r HTTP/1.1", "Host: x", "X-Act: serve 10000", r.hdr)+nextReq)
	}
	l.add("resp-head-range", msg("HEAD /r HTTP/1.1", "Host: x", "X-Act: serve 10000", "Range: bytes=0-3")+nextReq)
	l.add("resp-post-redirect", msg("POST /r HTTP/1.1", "Host: x", "X-Act: redirect 303", "Content-Length: 2")+"ab"+nextReq)
	l.add("resp-error-conn-close-request", msg("GET /r HTTP/1.1", "Host: x", "X-Act: error 400", "Connection: close"))
	l.add("resp-trailer-chunked-request", msg("POST /r HTTP/1.1", "Host: x", "X-Act: trailer", "Transfer-Encoding: chunked")+chunkedHello)
}

// allowedDiffs is the table of allowed differences, by case name (see
// "Allowed differences" in differential_test.go). Each entry is
// deliberate strictness of httpserver that the RFCs allow.
var allowedDiffs = func() map[string]allowedDiff {
	m := map[string]allowedDiff{
		"resp-get-html-3k": {kind: diffFraming,
			what: "a response written whole within 4 KiB gets a Content-Length; net/http, whose buffer is 2 KiB, chunks one past 2 KiB",
			ref:  "RFC 9112 section 6.1-6.2 (a server frames a response by Content-Length or chunked coding)"},
		"resp-get-text-4096": {kind: diffFraming,
			what: "a response written whole within 4 KiB gets a Content-Length; net/http chunks one past 2 KiB",
			ref:  "RFC 9112 section 6.1-6.2"},
		"resp-head-html-3k": {kind: diffFraming,
			what: "a response to HEAD gets the Content-Length its GET would have (one written within 4 KiB); net/http sends none past 2 KiB",
			ref:  "RFC 9110 section 9.3.2 (HEAD: the fields a GET would have, or a subset) and RFC 9112 section 6"},
		"resp-head-text-4096": {kind: diffFraming,
			what: "a response to HEAD gets the Content-Length its GET would have; net/http sends none past 2 KiB",
			ref:  "RFC 9110 section 9.3.2 and RFC 9112 section 6"},
		"resp-head-cl-invalid": {kind: diffValidLength,
			what: "the Handler's invalid Content-Length (x) is dropped from a response to HEAD; net/http sends it as it is, and no client can parse the response",
			ref:  "RFC 9110 section 8.6 (Content-Length = 1*DIGIT)"},
		"target-absolute-ftp": {kind: diffStricter, status: []int{400},
			what: "an absolute-form target of a scheme other than http or https is 400; net/http hands it to the Handler",
			ref:  "RFC 9112 section 3.2.2 (absolute-form names an http or https resource); RFC 9110 section 7.4 (a server may refuse a target it has no authority for)"},
		"target-get-asterisk": {kind: diffStricter, status: []int{400},
			what: "the asterisk-form target with GET is 400; net/http hands it to the Handler",
			ref:  "RFC 9112 section 3.2.4: the asterisk-form is only used for a server-wide OPTIONS request"},
		"prior-knowledge-h2": {kind: diffStricter, status: []int{400, 505},
			what: "the HTTP/2 preface (PRI * HTTP/2.0) is refused; net/http hands it to the Handler for an h2c upgrade",
			ref:  "RFC 9110 section 15.6.6 (505: the major version is not supported); httpserver has no h2c"},
		"target-absolute-empty-authority": {kind: diffStricter, status: []int{400},
			what: "the absolute-form target http:///p (empty host) is 400; net/http hands it to the Handler",
			ref:  "RFC 9110 section 4.2.1: a recipient MUST reject an http URI with an empty host identifier as invalid"},
		"host-absolute-userinfo-only": {kind: diffStricter, status: []int{400},
			what: "the absolute-form target http://u@/ (userinfo, empty host) is 400; net/http hands it to the Handler",
			ref:  "RFC 9110 section 4.2.1: a recipient MUST reject an http URI with an empty host identifier as invalid"},
		"target-absolute-scheme-only": {kind: diffStricter, status: []int{400},
			what: "the absolute-form target http:// (no host) is 400; net/http hands it to the Handler",
			ref:  "RFC 9110 section 4.2.1: a recipient MUST reject an http URI with an empty host identifier as invalid"},
		"conn-10-keep-close": {kind: diffCloses,
			what: "an HTTP/1.0 request with Connection: keep-alive, close gets the close; net/http reads the next request",
			ref:  "RFC 9112 section 9.6: a server that receives a close connection option MUST initiate closure after its response"},
		"chunked-trailer-obs-fold": {kind: diffStricterBody,
			what: "obs-fold in a trailer field fails the body read; net/http joins the lines",
			ref:  "RFC 9112 section 5.2 (obs-fold: reject, or replace with SP) and section 7.1.2 (trailer fields are field lines)"},
		"chunked-trailer-bare-lf": {kind: diffStricterBody,
			what: "a trailer line ended by a bare LF fails the body read; net/http takes it",
			ref:  "RFC 9112 section 2.2 (a recipient MAY recognise a bare LF) and section 7.1 (the chunked grammar ends its lines with CRLF)"},
		"chunk-end-bare-lf": {kind: diffStricterBody,
			what: "the CRLF that ends a chunked body, sent as a bare LF, fails the body read; net/http takes it",
			ref:  "RFC 9112 section 7.1: chunked-body = *chunk last-chunk trailer-section CRLF"},
		"chunked-trailer-bad-name": {kind: diffStricterBody,
			what: "a trailer field name with a space fails the body read; net/http keeps the field",
			ref:  "RFC 9110 section 5.1 (field-name = token) and RFC 9112 section 7.1.2"},
		"chunk-ext-nul": {kind: diffStricterBody,
			what: "a NUL in a chunk extension fails the body read; net/http ignores extensions",
			ref:  "RFC 9112 section 7.1.1: chunk-ext-val = token / quoted-string"},
		"chunk-size-16-f": {kind: diffStricterBody,
			what: "a chunk size of 2^64-1 fails the body read; net/http waits for that many bytes",
			ref:  "RFC 9112 section 7.1: recipients MUST anticipate large hexadecimal numerals and prevent integer overflow"},
	}
	both := allowedDiff{kind: diffStricter, status: []int{400},
		what: "a request with both Transfer-Encoding and Content-Length is 400; net/http frames it as chunked",
		ref:  "RFC 9112 section 6.1: a server MAY reject a request that contains both; it ought to be handled as an error"}
	for _, name := range []string{"cl-te", "te-cl", "cl-te-cl0", "te-cl-matching"} {
		m[name] = both
	}
	te10 := allowedDiff{kind: diffStricter, status: []int{400},
		what: "Transfer-Encoding in an HTTP/1.0 request is 400; net/http ignores the field",
		ref:  "RFC 9112 section 6.1: such a message MUST be treated as if the framing is faulty"}
	for _, name := range []string{"te-http10", "te-http10-with-cl", "te-http10-keep-alive", "te-http10-keep-alive-cl"} {
		m[name] = te10
	}
	fold := allowedDiff{kind: diffStricter, status: []int{400},
		what: "obs-fold (a field line starting with SP or HTAB) is 400; net/http joins the lines",
		ref:  "RFC 9112 section 5.2: a server MUST either reject a request with obs-fold with 400 or replace it with SP"}
	for _, name := range []string{"te-obs-fold", "te-obs-fold-tab", "te-bare-lf-fold", "cl-obs-fold", "line-obs-fold",
		"line-obs-fold-tab", "line-obs-fold-empty-first", "line-obs-fold-host", "line-obs-fold-connection-close",
		"uni-conn-keep-alive-folded-10"} {
		m[name] = fold
	}
	return m
}()
