//go:build !linux

package dummy

// notifier has no descriptor outside Linux; RxFd returns -1.
type notifier struct{ fd int }

func newNotifier() (notifier, error) { return notifier{fd: -1}, nil }
func (notifier) set()                {}
func (notifier) clear()              {}
func (notifier) close()              {}
