package httpc

// Response parsing, RFC 9112 sections 4 (status line), 5 (fields), 6
// (message body length) and 7.1 (chunked transfer coding).

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
)

const (
	maxResponseHeader = 64 << 10 // status line and fields, per response
	maxFields         = 100
	maxInterim        = 8 // 1xx responses before the final one
	maxChunkLine      = 4 << 10
)

var errHeaderTooLarge = errors.New("response header too large")

// readResponse reads one response from br, skipping interim 1xx responses.
// reusable reports whether the connection may carry another request: the
// body was delimited (not read until close), read completely, and the
// server did not ask to close. resp is not nil when the header was read,
// even if the body then failed.
func readResponse(br *bufio.Reader, maxBody int64) (resp *Response, reusable bool, err error) {
	var (
		status int
		http11 bool
		h      Header
	)
	for i := 0; ; i++ {
		budget := maxResponseHeader
		status, http11, err = readStatusLine(br, &budget)
		if err != nil {
			return nil, false, err
		}
		h, err = readFields(br, &budget)
		if err != nil {
			return nil, false, err
		}
		if status >= 200 {
			break
		}
		if status == 101 {
			return nil, false, errors.New("unexpected 101 switching protocols")
		}
		if i >= maxInterim {
			return nil, false, errors.New("too many interim responses")
		}
	}
	resp = &Response{Status: status, Header: h}
	reusable = keepAlive(h, http11)

	if status == 204 || status == 304 {
		return resp, reusable, nil
	}
	if te := h.values("Transfer-Encoding"); len(te) > 0 {
		if len(te) != 1 || !strings.EqualFold(strings.TrimSpace(te[0]), "chunked") {
			return resp, false, fmt.Errorf("unsupported transfer-encoding %q", strings.Join(te, ", "))
		}
		if len(h.values("Content-Length")) > 0 {
			reusable = false // both framings: trust neither for the next response
		}
		resp.Body, err = readChunked(br, maxBody)
		return resp, reusable && err == nil, err
	}
	n, ok, err := contentLength(h)
	if err != nil {
		return resp, false, err
	}
	if !ok { // delimited by the server closing the connection
		resp.Body, err = io.ReadAll(io.LimitReader(br, maxBody+1))
		if err != nil {
			return resp, false, fmt.Errorf("read body: %w", err)
		}
		if int64(len(resp.Body)) > maxBody {
			resp.Body = resp.Body[:maxBody]
			return resp, false, tooLarge(maxBody)
		}
		return resp, false, nil
	}
	if n > maxBody {
		resp.Body, err = readFull(br, maxBody, n)
		if err == nil {
			err = tooLarge(maxBody)
		}
		return resp, false, err
	}
	resp.Body, err = readFull(br, n, n)
	return resp, reusable && err == nil, err
}

func tooLarge(limit int64) error {
	return fmt.Errorf("read body: %w (limit %d bytes)", ErrBodyTooLarge, limit)
}

// readFull reads n bytes of a body of declared length total.
func readFull(br *bufio.Reader, n, total int64) ([]byte, error) {
	b := make([]byte, n)
	if got, err := io.ReadFull(br, b); err != nil {
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return b[:got], fmt.Errorf("read body: %d of %d bytes: %w", got, total, err)
	}
	return b, nil
}

// keepAlive reports whether the server allows another request on the
// connection.
func keepAlive(h Header, http11 bool) bool {
	ka := http11
	for _, v := range h.values("Connection") {
		for tok := range strings.SplitSeq(v, ",") {
			switch strings.ToLower(strings.TrimSpace(tok)) {
			case "close":
				return false
			case "keep-alive":
				ka = true
			}
		}
	}
	return ka
}

// contentLength returns the Content-Length, if any. Several fields must
// agree.
func contentLength(h Header) (n int64, ok bool, err error) {
	vs := h.values("Content-Length")
	for i, v := range vs {
		v = strings.TrimSpace(v)
		if v != strings.TrimSpace(vs[0]) {
			return 0, false, errors.New("conflicting content-length fields")
		}
		if i > 0 {
			continue
		}
		if v == "" || len(v) > 18 || strings.Trim(v, "0123456789") != "" {
			return 0, false, fmt.Errorf("invalid content-length %q", clip(v))
		}
		n, _ = strconv.ParseInt(v, 10, 64)
		ok = true
	}
	return n, ok, nil
}

// readLine reads a line ending in LF (CR LF or a bare LF) and returns it
// without the line ending. budget bounds what may be read; an EOF before
// any byte is io.EOF, after some bytes io.ErrUnexpectedEOF.
func readLine(br *bufio.Reader, budget *int) ([]byte, error) {
	var line []byte
	for {
		frag, err := br.ReadSlice('\n')
		*budget -= len(frag)
		if *budget < 0 {
			return nil, errHeaderTooLarge
		}
		line = append(line, frag...)
		if err == nil {
			break
		}
		if err != bufio.ErrBufferFull {
			if err == io.EOF && len(line) > 0 {
				err = io.ErrUnexpectedEOF
			}
			return nil, err
		}
	}
	line = line[:len(line)-1]
	if n := len(line); n > 0 && line[n-1] == '\r' {
		line = line[:n-1]
	}
	return line, nil
}

// readStatusLine parses "HTTP/1.1 200 OK"; the reason phrase is optional.
func readStatusLine(br *bufio.Reader, budget *int) (status int, http11 bool, err error) {
	line, err := readLine(br, budget)
	if err != nil {
		return 0, false, err
	}
	bad := func() (int, bool, error) {
		return 0, false, fmt.Errorf("malformed status line %q", clip(string(line)))
	}
	switch {
	case bytes.HasPrefix(line, []byte("HTTP/1.1 ")):
		http11 = true
	case bytes.HasPrefix(line, []byte("HTTP/1.0 ")):
	default:
		return bad()
	}
	rest := line[len("HTTP/1.1 "):]
	if len(rest) < 3 || (len(rest) > 3 && rest[3] != ' ') {
		return bad()
	}
	for _, c := range rest[:3] {
		if c < '0' || c > '9' {
			return bad()
		}
		status = status*10 + int(c-'0')
	}
	if status < 100 {
		return bad()
	}
	return status, http11, nil
}

// readFields reads header (or trailer) fields up to the empty line.
// Obsolete line folding is rejected, as RFC 9112 section 5.2 allows.
func readFields(br *bufio.Reader, budget *int) (Header, error) {
	var h Header
	for {
		line, err := readLine(br, budget)
		if err != nil {
			if err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return nil, err
		}
		if len(line) == 0 {
			return h, nil
		}
		if line[0] == ' ' || line[0] == '\t' {
			return nil, fmt.Errorf("folded header line %q not supported", clip(string(line)))
		}
		i := bytes.IndexByte(line, ':')
		if i <= 0 || !validName(string(line[:i])) {
			return nil, fmt.Errorf("malformed header line %q", clip(string(line)))
		}
		v := strings.Trim(string(line[i+1:]), " \t")
		if !validValue(v) {
			return nil, fmt.Errorf("malformed header line %q", clip(string(line)))
		}
		if len(h) >= maxFields {
			return nil, errors.New("too many header fields")
		}
		h = append(h, [2]string{string(line[:i]), v})
	}
}

// readChunked reads a chunked body and its trailer fields (which are
// checked and dropped).
func readChunked(br *bufio.Reader, maxBody int64) ([]byte, error) {
	var body []byte
	for {
		budget := maxChunkLine
		line, err := readLine(br, &budget)
		if err != nil {
			if err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return body, fmt.Errorf("read chunk size: %w", err)
		}
		size, err := chunkSize(line)
		if err != nil {
			return body, err
		}
		if size == 0 {
			break
		}
		if size > maxBody-int64(len(body)) {
			rest := maxBody - int64(len(body))
			part, err := readFull(br, rest, size)
			body = append(body, part...)
			if err == nil {
				err = tooLarge(maxBody)
			}
			return body, err
		}
		part, err := readFull(br, size, size)
		body = append(body, part...)
		if err != nil {
			return body, err
		}
		var crlf [2]byte
		if _, err := io.ReadFull(br, crlf[:]); err != nil {
			return body, fmt.Errorf("read chunk: %w", io.ErrUnexpectedEOF)
		}
		if crlf != [2]byte{'\r', '\n'} {
			return body, errors.New("malformed chunk: no CRLF after the data")
		}
	}
	budget := maxResponseHeader
	if _, err := readFields(br, &budget); err != nil {
		return body, fmt.Errorf("read trailer: %w", err)
	}
	if body == nil {
		body = []byte{}
	}
	return body, nil
}

// chunkSize parses "1a3f" or "1a3f;name=value" (extensions are ignored).
func chunkSize(line []byte) (int64, error) {
	s := line
	if i := bytes.IndexByte(s, ';'); i >= 0 {
		s = s[:i]
	}
	s = bytes.TrimRight(s, " \t")
	if len(s) == 0 || len(s) > 15 {
		return 0, fmt.Errorf("malformed chunk size %q", clip(string(line)))
	}
	var n int64
	for _, c := range s {
		var d byte
		switch {
		case '0' <= c && c <= '9':
			d = c - '0'
		case 'a' <= c && c <= 'f':
			d = c - 'a' + 10
		case 'A' <= c && c <= 'F':
			d = c - 'A' + 10
		default:
			return 0, fmt.Errorf("malformed chunk size %q", clip(string(line)))
		}
		n = n<<4 | int64(d)
	}
	return n, nil
}

// clip shortens s for an error message.
func clip(s string) string {
	if len(s) > 40 {
		return s[:40] + "..."
	}
	return s
}
