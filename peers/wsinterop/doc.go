// Package wsinterop checks blitz's websocket package against other Go
// WebSocket libraries (gorilla/websocket, coder/websocket, gobwas/ws,
// lxzan/gws): each library's client against a blitz server, and blitz's
// client against each library's server, with text and binary messages of
// 0 B to 300 KB, with and without permessage-deflate, fragmented
// messages, pings and the close handshake (code and reason checked on
// both sides). The tests are the package; it has no API.
//
// The peers live here, in the unpublished peers module, so that the
// websocket module itself depends on none of them.
//
//	go test ./peers/wsinterop -run Matrix -v
//
// With WS_MATRIX=file set, TestMain writes the outcome of each cell
// (peer, direction, compression, check) to file as a Markdown table.
package wsinterop
