package globalq

// Panic messages for misuse. They carry the package prefix, as the standard
// library's and golang.org/x/sync's do. A rejected push after Close is not
// misuse: Push and PushSlice report it by returning false.
const (
	msgNilPush    = "globalq: push of nil element"
	msgLinkedPush = "globalq: push of an element whose link is set (already in a queue?)"
	msgTailPush   = "globalq: push of the element at the tail of this queue"
	msgShards     = "globalq: shard count must be at least 1"
)
