// Package httpserver is an HTTP/1.1 server on the blitz runtime that serves
// ordinary net/http Handlers.
package httpserver
