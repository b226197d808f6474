package future

import (
	"strconv"
	"sync"
	"sync/atomic"
)

// Await sites. A task dump shows, for a task suspended in an async
// function, the line of the await it is suspended at: the generated code
// registers each of its awaits once (NewAwaitSite, in a package variable)
// and, on the path where an await returns not-ready, records its site in
// the task's executor (Context.Suspended). The innermost async function
// records first, as its Poll returns first; the functions awaiting it keep
// that record, which names the line nearest the wait.

// AwaitSite is a registered await of an async function: its file, line
// and function. The zero AwaitSite is "no site".
type AwaitSite uint32

// awaitSiteInfo is a registered site.
type awaitSiteInfo struct {
	// str is "file:line (function)", made once: a dump reads it for each
	// suspended task.
	str string
}

// awaitSites is the registry: index = site - 1. Appended to under
// awaitSitesMu; read through the atomic pointer to the slice, which
// publishes the entries (a reader sees a slice whose entries were all
// written before it was stored).
var (
	awaitSitesMu sync.Mutex
	awaitSites   atomic.Pointer[[]*awaitSiteInfo]
)

// NewAwaitSite registers an await at line of file, in function fn, and
// returns its site. Generated code registers each await once, at package
// initialization. Any goroutine may call it.
func NewAwaitSite(file string, line int, fn string) AwaitSite {
	awaitSitesMu.Lock()
	defer awaitSitesMu.Unlock()
	var sites []*awaitSiteInfo
	if p := awaitSites.Load(); p != nil {
		sites = *p
	}
	sites = append(sites[:len(sites):len(sites)], &awaitSiteInfo{str: file + ":" + strconv.Itoa(line) + " (" + fn + ")"})
	awaitSites.Store(&sites)
	return AwaitSite(len(sites))
}

// info returns the site's registration, nil for the zero site or an
// unregistered one.
func (s AwaitSite) info() *awaitSiteInfo {
	p := awaitSites.Load()
	if s == 0 || p == nil || int(s) > len(*p) {
		return nil
	}
	return (*p)[s-1]
}

// String returns "file:line (function)", "" for the zero site.
func (s AwaitSite) String() string {
	if x := s.info(); x != nil {
		return x.str
	}
	return ""
}

// SiteRecorder keeps, for an executor's task, the await site at which its
// async function last suspended (Context.SetSiteRecorder).
type SiteRecorder interface {
	// RecordSite records s. Called on the polling goroutine, once per poll
	// at most.
	RecordSite(s AwaitSite)
}

// Suspended records, for a task dump, that the task being polled is
// suspended at the await s, unless an await nested deeper in this poll
// recorded its own first. Generated code calls it where an await returns
// not-ready; it costs a call, and nothing outside an executor that keeps
// sites (SetSiteRecorder).
func (cx *Context) Suspended(s AwaitSite) {
	if cx.sites == nil || cx.siteDone {
		return
	}
	cx.siteDone = true
	cx.sites.RecordSite(s)
}
