package dpcls

import "unsafe"

// wide returns the wideEntry whose first field is e. It is valid only for
// entries of subtables with more than inlineWords mask words, which
// newEntry always allocates as wideEntry values.
func wide[T any](e *entry[T]) *wideEntry[T] {
	return (*wideEntry[T])(unsafe.Pointer(e))
}
