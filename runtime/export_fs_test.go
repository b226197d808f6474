package runtime

// FileOnRing reports whether f's data operations are io_uring operations.
func FileOnRing(f *File) bool { return f.ring != nil }
