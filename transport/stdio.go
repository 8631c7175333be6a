package transport

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// DefaultMaxLineBytes bounds one stdio message when neither
// StdioTransport.MaxLineBytes nor Options.MaxBodyBytes says otherwise.
const DefaultMaxLineBytes = 16 << 20

// StdioTransport speaks newline-delimited JSON-RPC on In and Out, as MCP's
// stdio transport does, but never ends the connection because of what a
// line holds: a line that is not one valid JSON-RPC 2.0 message is answered
// with the error the JSON-RPC spec names for it (-32700 parse error,
// -32600 invalid request) and the next line is read normally. Only the end
// of In (or Close) ends the connection. The SDK's own stdio transport
// closes the session on the first bad line, and one truncated line there
// swallows the message after it.
//
// Batches (a JSON array) are refused with -32600: MCP removed them in
// 2025-06-18, and serving them only to older clients is not worth the
// ambiguity of what a partly malformed batch means.
type StdioTransport struct {
	// In is read line by line; Close closes it.
	In io.ReadCloser
	// Out receives one JSON-RPC message per line. Writes are serialised.
	Out io.Writer
	// MaxLineBytes bounds one line; a longer line is refused (-32600) and
	// skipped up to its newline. 0 means DefaultMaxLineBytes.
	MaxLineBytes int
}

// Connect implements mcp.Transport.
func (t *StdioTransport) Connect(context.Context) (mcp.Connection, error) {
	max := t.MaxLineBytes
	if max <= 0 {
		max = DefaultMaxLineBytes
	}
	c := &lineConn{in: t.In, out: t.Out, incoming: make(chan readResult), closed: make(chan struct{})}
	go c.readLoop(bufio.NewReaderSize(t.In, 64<<10), max)
	return c, nil
}

// lineConn is the mcp.Connection of a StdioTransport. A goroutine reads
// lines, answers the malformed ones itself and hands the rest to Read, so
// that Close can unblock a Read waiting on input.
type lineConn struct {
	in  io.Closer
	out io.Writer

	writeMu sync.Mutex

	incoming  chan readResult
	closeOnce sync.Once
	closed    chan struct{}
}

type readResult struct {
	msg jsonrpc.Message
	err error
}

func (c *lineConn) readLoop(r *bufio.Reader, max int) {
	for {
		line, tooLong, err := readLine(r, max)
		if msg := c.accept(line, tooLong, max); msg != nil && !c.deliver(readResult{msg: msg}) {
			return
		}
		if err != nil { // io.EOF at the end of input
			c.deliver(readResult{err: err})
			return
		}
	}
}

// accept returns the message a line holds, or answers the line itself
// when it holds none (blank lines are skipped without a word).
func (c *lineConn) accept(line []byte, tooLong bool, max int) jsonrpc.Message {
	if tooLong {
		c.refuse(nil, jsonrpc.CodeInvalidRequest, fmt.Sprintf("message is longer than this server's limit of %d bytes; it was skipped", max))
		return nil
	}
	if len(bytes.TrimSpace(line)) == 0 {
		return nil
	}
	msg, bad := decodeLine(line)
	if bad != nil {
		c.refuse(bad.id, bad.code, bad.message)
	}
	return msg
}

// deliver hands r to Read; false when the connection closed first.
func (c *lineConn) deliver(r readResult) bool {
	select {
	case c.incoming <- r:
		return true
	case <-c.closed:
		return false
	}
}

// readLine reads up to the next newline. A line over max bytes is read to
// its end and dropped (tooLong, line nil), so memory stays bounded and the
// next line starts where the client meant it to.
func readLine(r *bufio.Reader, max int) (line []byte, tooLong bool, err error) {
	for {
		chunk, err := r.ReadSlice('\n')
		if !tooLong && len(line)+len(chunk) > max+2 { // room for "\r\n"
			tooLong, line = true, nil
		}
		if !tooLong {
			line = append(line, chunk...)
		}
		if !errors.Is(err, bufio.ErrBufferFull) {
			return line, tooLong, err
		}
	}
}

// lineError is a malformed line's answer. id is the raw id to echo, or nil
// for null when the line has none that can be echoed.
type lineError struct {
	id      json.RawMessage
	code    int
	message string
}

// wireMessage holds a message's members undecoded, so that each can be
// checked for what JSON-RPC 2.0 allows.
type wireMessage struct {
	Version json.RawMessage `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Method  json.RawMessage `json:"method"`
	Params  json.RawMessage `json:"params"`
	Result  json.RawMessage `json:"result"`
	Error   json.RawMessage `json:"error"`
}

// decodeLine turns one line into a message for the SDK, or says why it
// cannot be one.
func decodeLine(line []byte) (jsonrpc.Message, *lineError) {
	line = bytes.TrimSpace(line)
	parseError := &lineError{code: jsonrpc.CodeParseError, message: "parse error: the line is not valid JSON"}
	if line[0] != '{' {
		switch {
		case !json.Valid(line):
			return nil, parseError
		case line[0] == '[':
			return nil, &lineError{code: jsonrpc.CodeInvalidRequest, message: "invalid request: JSON-RPC batches are not supported (MCP removed them in 2025-06-18); send one message per line"}
		default:
			return nil, &lineError{code: jsonrpc.CodeInvalidRequest, message: "invalid request: a JSON-RPC message is a JSON object"}
		}
	}
	// One pass checks the syntax and splits the members (a large message
	// is scanned as few times as possible before the SDK decodes it).
	var env wireMessage
	if err := json.Unmarshal(line, &env); err != nil {
		return nil, parseError // every member is raw: only syntax can fail
	}
	id, idErr := checkID(env.ID)
	invalid := func(why string) *lineError {
		return &lineError{id: id, code: jsonrpc.CodeInvalidRequest, message: "invalid request: " + why}
	}
	if string(env.Version) != `"2.0"` {
		return nil, invalid(`"jsonrpc" must be "2.0"`)
	}
	if idErr != "" {
		return nil, invalid(idErr)
	}
	if env.Method != nil {
		var method string
		if json.Unmarshal(env.Method, &method) != nil || method == "" {
			return nil, invalid(`"method" must be a non-empty string`)
		}
		if p := bytes.TrimSpace(env.Params); p != nil && p[0] != '{' && p[0] != '[' {
			return nil, invalid(`"params" must be an object`)
		}
	} else {
		if id == nil {
			return nil, invalid(`a message without "method" is a response and needs an "id"`)
		}
		if (env.Result == nil) == (env.Error == nil) {
			return nil, invalid(`a response has exactly one of "result" and "error"`)
		}
	}
	msg, err := jsonrpc.DecodeMessage(line)
	if err != nil {
		return nil, invalid(err.Error())
	}
	return msg, nil
}

// checkID accepts what the SDK echoes exactly: a string, or an integer
// within ±2^53. The SDK holds numeric ids as float64, so 1.5 would come
// back as 1 and 2^53+1 as 2^53: two requests could share one answer. The
// raw id is returned whenever it can be echoed in an error.
func checkID(raw json.RawMessage) (json.RawMessage, string) {
	raw = bytes.TrimSpace(raw)
	if raw == nil {
		return nil, ""
	}
	switch raw[0] {
	case '"':
		return raw, ""
	case 'n':
		return nil, `"id" must not be null`
	case '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
		n, err := strconv.ParseInt(string(raw), 10, 64)
		if err != nil || n > maxExactID || n < -maxExactID || string(raw) == "-0" {
			return nil, `"id" must be a string or an integer within ±2^53 (what a JSON number carries exactly)`
		}
		return raw, ""
	}
	return nil, `"id" must be a string or an integer`
}

// maxExactID is the largest integer every JSON reader holds exactly.
const maxExactID = 1 << 53

// refuse answers a malformed line. A write error is left for the next
// Write to report: the connection is as good or as broken as before.
func (c *lineConn) refuse(id json.RawMessage, code int, message string) {
	if id == nil {
		id = json.RawMessage("null")
	}
	b, _ := json.Marshal(struct {
		Version string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   jsonrpc.Error   `json:"error"`
	}{"2.0", id, jsonrpc.Error{Code: int64(code), Message: message}})
	_ = c.writeLine(b)
}

func (c *lineConn) writeLine(b []byte) error {
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	_, err := c.out.Write(append(b, '\n'))
	return err
}

// Read returns the next well-formed message, io.EOF at the end of input.
func (c *lineConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	select {
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-c.closed:
		return nil, io.EOF
	case r := <-c.incoming:
		return r.msg, r.err
	}
}

// Write sends msg on one line, a response's error with a JSON-RPC code
// (properCode: never the SDK's 0). It is safe for concurrent use.
func (c *lineConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	b, err := jsonrpc.EncodeMessage(withProperCode(msg))
	if err != nil {
		return fmt.Errorf("encoding a JSON-RPC message: %w", err)
	}
	return c.writeLine(b)
}

// Close closes In, which ends the read loop. It may be called more than once.
func (c *lineConn) Close() error {
	var err error
	c.closeOnce.Do(func() {
		close(c.closed)
		err = c.in.Close()
	})
	return err
}

// SessionID implements mcp.Connection: stdio has no session id.
func (c *lineConn) SessionID() string { return "" }
