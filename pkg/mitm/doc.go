// Package mitm is the transport layer of the render proxy: the HTTP proxy
// that a headless browser sends every request through so that each exchange
// can be recorded.
//
// A Server accepts the browser's proxy connections: plain HTTP requests in
// absolute form, and CONNECT tunnels, which it intercepts with TLS using
// leaf certificates minted by a per-run CA. Every request becomes a Request
// value handed to the caller's Handler, which does the real upstream fetch
// (and the recording); the Handler's Response is written back to the browser.
// The package itself never contacts any upstream.
package mitm
