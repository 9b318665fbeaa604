// Package pcap reads and writes the classic libpcap file format (the
// format of tcpdump -w and of Open vSwitch's netdev-dummy pcap options)
// for Ethernet frames. Writing never allocates per packet; reading bounds
// every length it is given, so a hostile file yields an error, not a
// panic or a huge allocation.
//
// It imports only the standard library.
package pcap

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"time"
)

// File format constants.
const (
	magicMicros      = 0xa1b2c3d4
	magicNanos       = 0xa1b23c4d
	versionMajor     = 2
	versionMinor     = 4
	fileHeaderLen    = 24
	recordHeaderLen  = 16
	LinkTypeEthernet = 1
	// MaxSnapLen bounds a record's captured length when reading, as
	// libpcap's MAXIMUM_SNAPLEN does.
	MaxSnapLen = 262144
)

// Errors returned by Reader.
var (
	ErrBadMagic    = errors.New("pcap: not a pcap file")
	ErrLinkType    = errors.New("pcap: link type is not Ethernet")
	ErrRecordLen   = errors.New("pcap: record length out of range")
	ErrShortRecord = errors.New("pcap: truncated record")
)

// Writer writes a pcap stream of Ethernet frames with microsecond
// timestamps. It is not safe for concurrent use.
type Writer struct {
	w   *bufio.Writer
	hdr [recordHeaderLen]byte
}

// NewWriter returns a Writer on w. If writeHeader is false, w is assumed
// to already hold a file header (appending to an existing file).
func NewWriter(w io.Writer, writeHeader bool) (*Writer, error) {
	pw := &Writer{w: bufio.NewWriterSize(w, 64<<10)}
	if writeHeader {
		var h [fileHeaderLen]byte
		le := binary.LittleEndian
		le.PutUint32(h[0:], magicMicros)
		le.PutUint16(h[4:], versionMajor)
		le.PutUint16(h[6:], versionMinor)
		// thiszone and sigfigs stay zero.
		le.PutUint32(h[16:], MaxSnapLen)
		le.PutUint32(h[20:], LinkTypeEthernet)
		if _, err := pw.w.Write(h[:]); err != nil {
			return nil, fmt.Errorf("pcap: write file header: %w", err)
		}
	}
	return pw, nil
}

// WritePacket buffers one frame captured at ts. Call Flush to push
// buffered records to the underlying writer.
func (w *Writer) WritePacket(ts time.Time, frame []byte) error {
	n := len(frame)
	if n > MaxSnapLen {
		n = MaxSnapLen
	}
	le := binary.LittleEndian
	le.PutUint32(w.hdr[0:], uint32(ts.Unix()))
	le.PutUint32(w.hdr[4:], uint32(ts.Nanosecond()/1000))
	le.PutUint32(w.hdr[8:], uint32(n))
	le.PutUint32(w.hdr[12:], uint32(len(frame)))
	if _, err := w.w.Write(w.hdr[:]); err != nil {
		return fmt.Errorf("pcap: write record header: %w", err)
	}
	if _, err := w.w.Write(frame[:n]); err != nil {
		return fmt.Errorf("pcap: write record: %w", err)
	}
	return nil
}

// Flush writes buffered records to the underlying writer.
func (w *Writer) Flush() error {
	if err := w.w.Flush(); err != nil {
		return fmt.Errorf("pcap: flush: %w", err)
	}
	return nil
}

// Reader reads a pcap stream of Ethernet frames in either byte order,
// with microsecond or nanosecond timestamps.
type Reader struct {
	r       io.Reader
	order   binary.ByteOrder
	nanos   bool
	snapLen uint32
	hdr     [recordHeaderLen]byte
	buf     []byte
}

// NewReader reads and checks the file header.
func NewReader(r io.Reader) (*Reader, error) {
	var h [fileHeaderLen]byte
	if _, err := io.ReadFull(r, h[:]); err != nil {
		return nil, fmt.Errorf("pcap: read file header: %w", err)
	}
	pr := &Reader{r: r}
	switch {
	case binary.LittleEndian.Uint32(h[:]) == magicMicros:
		pr.order = binary.LittleEndian
	case binary.BigEndian.Uint32(h[:]) == magicMicros:
		pr.order = binary.BigEndian
	case binary.LittleEndian.Uint32(h[:]) == magicNanos:
		pr.order, pr.nanos = binary.LittleEndian, true
	case binary.BigEndian.Uint32(h[:]) == magicNanos:
		pr.order, pr.nanos = binary.BigEndian, true
	default:
		return nil, ErrBadMagic
	}
	// The link type's low 16 bits are the type; the rest are FCS flags.
	if lt := pr.order.Uint32(h[20:]) & 0xffff; lt != LinkTypeEthernet {
		return nil, fmt.Errorf("%w: %d", ErrLinkType, lt)
	}
	pr.snapLen = pr.order.Uint32(h[16:])
	return pr, nil
}

// Next returns the next frame, its timestamp and its original length on
// the wire (which exceeds len(frame) if the capture was truncated). The
// frame is valid until the next call. At the end of the stream it returns
// io.EOF.
func (r *Reader) Next() (frame []byte, ts time.Time, origLen int, err error) {
	if _, err := io.ReadFull(r.r, r.hdr[:]); err != nil {
		if errors.Is(err, io.ErrUnexpectedEOF) {
			return nil, time.Time{}, 0, ErrShortRecord
		}
		return nil, time.Time{}, 0, err
	}
	sec := r.order.Uint32(r.hdr[0:])
	frac := r.order.Uint32(r.hdr[4:])
	incl := r.order.Uint32(r.hdr[8:])
	orig := r.order.Uint32(r.hdr[12:])
	if incl > MaxSnapLen || orig > 1<<30 {
		return nil, time.Time{}, 0, fmt.Errorf("%w: %d", ErrRecordLen, incl)
	}
	if cap(r.buf) < int(incl) {
		r.buf = make([]byte, incl)
	}
	r.buf = r.buf[:incl]
	if _, err := io.ReadFull(r.r, r.buf); err != nil {
		return nil, time.Time{}, 0, ErrShortRecord
	}
	nsec := int64(frac)
	if !r.nanos {
		nsec *= 1000
	}
	if orig < incl {
		orig = incl
	}
	return r.buf, time.Unix(int64(sec), nsec), int(orig), nil
}
