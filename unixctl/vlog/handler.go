package vlog

import (
	"context"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// handler is the slog.Handler behind a module's logger.
type handler struct {
	m      *Module
	attrs  string // preformatted " k=v" pairs from WithAttrs
	prefix string // group prefix, "g1.g2."
}

var _ slog.Handler = (*handler)(nil)

func (h *handler) enabledAt(l Level) (mask uint8) {
	for d := range numDests {
		if l <= h.m.Level(d) && h.m.f.hasSink[d].Load() {
			mask |= 1 << d
		}
	}
	return mask
}

func (h *handler) Enabled(_ context.Context, l slog.Level) bool {
	return h.enabledAt(FromSlog(l)) != 0
}

func (h *handler) Handle(_ context.Context, r slog.Record) error {
	lvl := FromSlog(r.Level)
	mask := h.enabledAt(lvl)
	if mask == 0 {
		return nil
	}
	var msg strings.Builder
	msg.WriteString(r.Message)
	msg.WriteString(h.attrs)
	r.Attrs(func(a slog.Attr) bool {
		appendAttr(&msg, h.prefix, a)
		return true
	})
	t := r.Time
	if t.IsZero() || h.m.f.fixedClock {
		t = h.m.f.opts.Now()
	}
	return h.m.f.write(mask, h.m.name, lvl, t, msg.String())
}

func (h *handler) WithAttrs(as []slog.Attr) slog.Handler {
	var b strings.Builder
	b.WriteString(h.attrs)
	for _, a := range as {
		appendAttr(&b, h.prefix, a)
	}
	return &handler{m: h.m, attrs: b.String(), prefix: h.prefix}
}

func (h *handler) WithGroup(name string) slog.Handler {
	if name == "" {
		return h
	}
	return &handler{m: h.m, attrs: h.attrs, prefix: h.prefix + name + "."}
}

// appendAttr writes " key=value", quoting values that need it, as
// slog's text handler does.
func appendAttr(b *strings.Builder, prefix string, a slog.Attr) {
	a.Value = a.Value.Resolve()
	if a.Equal(slog.Attr{}) {
		return
	}
	if a.Value.Kind() == slog.KindGroup {
		p := prefix
		if a.Key != "" {
			p += a.Key + "."
		}
		for _, g := range a.Value.Group() {
			appendAttr(b, p, g)
		}
		return
	}
	b.WriteByte(' ')
	b.WriteString(prefix)
	b.WriteString(a.Key)
	b.WriteByte('=')
	s := a.Value.String()
	if needsQuote(s) {
		s = strconv.Quote(s)
	}
	b.WriteString(s)
}

func needsQuote(s string) bool {
	if s == "" {
		return true
	}
	for _, r := range s {
		if r <= ' ' || r == '=' || r == '"' || r == 0x7f || r == utf8.RuneError {
			return true
		}
	}
	return false
}

// write formats one message for each destination in mask and writes it.
func (f *Facility) write(mask uint8, module string, l Level, t time.Time, msg string) error {
	seq := f.seq.Add(1)
	f.mu.Lock()
	defer f.mu.Unlock()
	var firstErr error
	for d := range numDests {
		w := f.sinks[d]
		if mask&(1<<d) == 0 || w == nil {
			continue
		}
		line := f.format(f.patterns[d], module, l, t, seq, msg)
		if d == Syslog {
			line = f.format(syslogPrefix, module, l, t, seq, msg) + " " + line
		} else {
			line += "\n"
		}
		if _, err := w.Write([]byte(line)); err != nil && firstErr == nil {
			firstErr = fmt.Errorf("vlog: writing to %s: %w", d, err)
		}
	}
	return firstErr
}

// format expands an Open vSwitch log pattern:
//
//	%A program   %B syslog priority   %c module   %d{fmt} local time
//	%D{fmt} UTC  %E hostname   %m message   %N serial number   %n newline
//	%p level     %P pid        %r ms since start   %t thread ("main")
//	%T thread in parentheses, empty on the main thread   %% percent
//
// Each directive takes an optional "-" (left-justify), "0" (zero-pad) and
// width, as in "%05N". Time formats are strftime-like; "#" runs print
// fractions of a second ("###" = milliseconds).
//
// Preconditions: f.mu is held (reads facility).
func (f *Facility) format(pattern, module string, l Level, t time.Time, seq uint64, msg string) string {
	var b strings.Builder
	for i := 0; i < len(pattern); i++ {
		c := pattern[i]
		if c != '%' || i+1 >= len(pattern) {
			b.WriteByte(c)
			continue
		}
		i++
		left, zero := false, false
		for i < len(pattern) && (pattern[i] == '-' || pattern[i] == '0') {
			if pattern[i] == '-' {
				left = true
			} else {
				zero = true
			}
			i++
		}
		width := 0
		for i < len(pattern) && pattern[i] >= '0' && pattern[i] <= '9' {
			// Patterns arrive over the control socket: cap the width.
			width = min(width*10+int(pattern[i]-'0'), maxWidth)
			i++
		}
		if i >= len(pattern) {
			break
		}
		var s string
		switch pattern[i] {
		case 'A':
			s = f.opts.Program
		case 'B':
			s = strconv.Itoa(f.facility*8 + rfc5424[l])
		case 'c':
			s = module
		case 'd', 'D':
			tt := t.Local()
			if pattern[i] == 'D' {
				tt = t.UTC()
			}
			tf := "%Y-%m-%d %H:%M:%S.###"
			if i+1 < len(pattern) && pattern[i+1] == '{' {
				if end := strings.IndexByte(pattern[i+2:], '}'); end >= 0 {
					tf = pattern[i+2 : i+2+end]
					i += end + 2
				}
			}
			s = strftime(tf, tt)
		case 'E':
			s = f.host
		case 'm':
			s = msg
		case 'N':
			s = strconv.FormatUint(seq, 10)
		case 'n':
			s = "\n"
		case 'p':
			s = strings.ToUpper(l.String())
		case 'P':
			s = strconv.Itoa(f.pid)
		case 'r':
			s = strconv.FormatInt(t.Sub(f.start).Milliseconds(), 10)
		case 't':
			s = "main"
		case 'T':
			s = ""
		case '%':
			s = "%"
		default:
			s = "%" + string(pattern[i])
		}
		pad := width - utf8.RuneCountInString(s)
		switch {
		case pad <= 0:
			b.WriteString(s)
		case left:
			b.WriteString(s)
			b.WriteString(strings.Repeat(" ", pad))
		case zero:
			b.WriteString(strings.Repeat("0", pad))
			b.WriteString(s)
		default:
			b.WriteString(strings.Repeat(" ", pad))
			b.WriteString(s)
		}
	}
	return b.String()
}

// maxWidth bounds a directive's field width.
const maxWidth = 1024

var months = [...]string{"Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"}
var days = [...]string{"Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"}

// strftime supports the conversions Open vSwitch patterns use.
func strftime(layout string, t time.Time) string {
	var b strings.Builder
	for i := 0; i < len(layout); i++ {
		c := layout[i]
		if c == '#' {
			n := 0
			for i < len(layout) && layout[i] == '#' {
				n++
				i++
			}
			i--
			frac := fmt.Sprintf("%09d", t.Nanosecond())
			if n > 9 {
				n = 9
			}
			b.WriteString(frac[:n])
			continue
		}
		if c != '%' || i+1 >= len(layout) {
			b.WriteByte(c)
			continue
		}
		i++
		switch layout[i] {
		case 'Y':
			fmt.Fprintf(&b, "%04d", t.Year())
		case 'y':
			fmt.Fprintf(&b, "%02d", t.Year()%100)
		case 'm':
			fmt.Fprintf(&b, "%02d", int(t.Month()))
		case 'd':
			fmt.Fprintf(&b, "%02d", t.Day())
		case 'e':
			fmt.Fprintf(&b, "%2d", t.Day())
		case 'H':
			fmt.Fprintf(&b, "%02d", t.Hour())
		case 'M':
			fmt.Fprintf(&b, "%02d", t.Minute())
		case 'S':
			fmt.Fprintf(&b, "%02d", t.Second())
		case 'T':
			fmt.Fprintf(&b, "%02d:%02d:%02d", t.Hour(), t.Minute(), t.Second())
		case 'b', 'h':
			b.WriteString(months[t.Month()-1])
		case 'a':
			b.WriteString(days[t.Weekday()])
		case 'j':
			fmt.Fprintf(&b, "%03d", t.YearDay())
		case 'Z':
			name, _ := t.Zone()
			b.WriteString(name)
		case 's':
			b.WriteString(strconv.FormatInt(t.Unix(), 10))
		case '%':
			b.WriteByte('%')
		default:
			b.WriteByte('%')
			b.WriteByte(layout[i])
		}
	}
	return b.String()
}
