package jsonrpc

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
)

// Kind says which of the four JSON-RPC 1.0 message shapes a Message has.
type Kind uint8

// The message kinds.
const (
	KindRequest Kind = iota + 1 // method, params, id
	KindNotify                  // method, params, id null
	KindReply                   // result, error null, id
	KindError                   // error non-null, id
)

var kindNames = [...]string{"invalid", "request", "notification", "reply", "error"}

func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return fmt.Sprintf("kind(%d)", uint8(k))
}

// Message is one JSON-RPC 1.0 message. Params, Result, Error and ID hold raw
// JSON so that callers decode them with the types they expect.
type Message struct {
	Kind   Kind
	Method string
	Params json.RawMessage
	Result json.RawMessage
	Error  json.RawMessage
	ID     json.RawMessage
}

// NewRequest builds a request. id must not be JSON null.
func NewRequest(method string, params any, id any) (*Message, error) {
	p, err := marshalParams(params)
	if err != nil {
		return nil, err
	}
	rid, err := json.Marshal(id)
	if err != nil {
		return nil, fmt.Errorf("jsonrpc: encoding id: %w", err)
	}
	return &Message{Kind: KindRequest, Method: method, Params: p, ID: rid}, nil
}

// NewNotify builds a notification (a request with a null id).
func NewNotify(method string, params any) (*Message, error) {
	p, err := marshalParams(params)
	if err != nil {
		return nil, err
	}
	return &Message{Kind: KindNotify, Method: method, Params: p}, nil
}

// NewReply builds a successful reply to the request with the given id.
func NewReply(id json.RawMessage, result any) (*Message, error) {
	r, err := marshal(result)
	if err != nil {
		return nil, fmt.Errorf("jsonrpc: encoding result: %w", err)
	}
	return &Message{Kind: KindReply, Result: r, ID: id}, nil
}

// NewError builds an error reply. errObj is usually a string or an object
// with "error" and "details" members, as ovsdb-server sends.
func NewError(id json.RawMessage, errObj any) (*Message, error) {
	e, err := marshal(errObj)
	if err != nil {
		return nil, fmt.Errorf("jsonrpc: encoding error: %w", err)
	}
	return &Message{Kind: KindError, Error: e, ID: id}, nil
}

func marshalParams(params any) (json.RawMessage, error) {
	if params == nil {
		return json.RawMessage("[]"), nil
	}
	p, err := marshal(params)
	if err != nil {
		return nil, fmt.Errorf("jsonrpc: encoding params: %w", err)
	}
	return p, nil
}

// marshal encodes without HTML escaping, as Open vSwitch does.
func marshal(v any) (json.RawMessage, error) {
	if r, ok := v.(json.RawMessage); ok {
		return r, nil
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimRight(b.Bytes(), "\n"), nil
}

// wire is the union of all members a message may carry.
type wire struct {
	Method *string         `json:"method"`
	Params json.RawMessage `json:"params"`
	Result json.RawMessage `json:"result"`
	Error  json.RawMessage `json:"error"`
	ID     json.RawMessage `json:"id"`
}

// ErrInvalid is wrapped by every error about a message that is well-formed
// JSON but not a valid JSON-RPC message.
var ErrInvalid = errors.New("jsonrpc: invalid message")

func isNull(r json.RawMessage) bool {
	return len(r) == 0 || bytes.Equal(r, []byte("null"))
}

// Decode parses one JSON object into a Message and classifies it.
func Decode(data []byte) (*Message, error) {
	var w wire
	if err := json.Unmarshal(data, &w); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalid, err)
	}
	m := &Message{Params: w.Params, Result: w.Result, Error: w.Error, ID: w.ID}
	switch {
	case w.Method != nil:
		m.Method = *w.Method
		if !isNull(w.Result) || !isNull(w.Error) {
			return nil, fmt.Errorf("%w: request %q carries result or error", ErrInvalid, m.Method)
		}
		if len(w.Params) == 0 || w.Params[0] != '[' {
			return nil, fmt.Errorf("%w: %q params is not an array", ErrInvalid, m.Method)
		}
		m.Error = nil
		if isNull(w.ID) {
			m.Kind, m.ID = KindNotify, nil
		} else {
			m.Kind = KindRequest
		}
	case !isNull(w.Error):
		m.Kind = KindError
	case len(w.Result) != 0:
		m.Kind = KindReply
	default:
		return nil, fmt.Errorf("%w: neither method, result nor error", ErrInvalid)
	}
	if m.Kind == KindReply || m.Kind == KindError {
		if len(m.ID) == 0 {
			return nil, fmt.Errorf("%w: %s without id", ErrInvalid, m.Kind)
		}
		m.Error = w.Error
		if m.Kind == KindReply {
			m.Error = nil
		}
	}
	return m, nil
}

// Encode appends the message's wire form to dst. Replies carry "error":null
// and error replies carry no "result", as Open vSwitch writes them.
func (m *Message) Encode(dst []byte) ([]byte, error) {
	id := m.ID
	if len(id) == 0 {
		id = json.RawMessage("null")
	}
	switch m.Kind {
	case KindRequest, KindNotify:
		name, err := marshal(m.Method)
		if err != nil {
			return dst, err
		}
		params := m.Params
		if len(params) == 0 {
			params = json.RawMessage("[]")
		}
		if m.Kind == KindNotify {
			id = json.RawMessage("null")
		}
		dst = append(dst, `{"id":`...)
		dst = append(dst, id...)
		dst = append(dst, `,"method":`...)
		dst = append(dst, name...)
		dst = append(dst, `,"params":`...)
		dst = append(dst, params...)
	case KindReply:
		res := m.Result
		if len(res) == 0 {
			res = json.RawMessage("null")
		}
		dst = append(dst, `{"id":`...)
		dst = append(dst, id...)
		dst = append(dst, `,"result":`...)
		dst = append(dst, res...)
		dst = append(dst, `,"error":null`...)
	case KindError:
		e := m.Error
		if isNull(e) {
			return dst, fmt.Errorf("%w: error reply with null error", ErrInvalid)
		}
		dst = append(dst, `{"id":`...)
		dst = append(dst, id...)
		dst = append(dst, `,"error":`...)
		dst = append(dst, e...)
	default:
		return dst, fmt.Errorf("%w: kind %v", ErrInvalid, m.Kind)
	}
	return append(dst, '}'), nil
}

// EchoReply answers an "echo" request as Open vSwitch does, returning its
// params as the result. It reports false for any other message.
func EchoReply(m *Message) (*Message, bool) {
	if m.Kind != KindRequest || m.Method != "echo" {
		return nil, false
	}
	return &Message{Kind: KindReply, Result: m.Params, ID: m.ID}, true
}
