package httpc

import (
	"bufio"
	"bytes"
	"errors"
	"testing"
)

func FuzzReadResponse(f *testing.F) {
	for _, s := range []string{
		"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello",
		"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5;x=y\r\nhello\r\n0\r\nT: 1\r\n\r\n",
		"HTTP/1.0 200 OK\r\n\r\nclose-delimited",
		"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 204 No Content\r\n\r\n",
		"HTTP/1.1 429 Too Many Requests\r\nRetry-After: 3\r\nConnection: close\r\nContent-Length: 2\r\n\r\n{}",
		"HTTP/1.1 200 OK\r\nX: a\r\n b\r\n\r\n",
		"HTTP/1.1 200 OK\nContent-Length: 1\nContent-Length: 1\n\nx",
		"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nContent-Length: 3\r\n\r\nfffffffffffffff\r\n",
	} {
		f.Add([]byte(s), uint16(16))
	}
	f.Fuzz(func(t *testing.T, data []byte, max uint16) {
		maxBody := int64(max) + 1
		resp, reusable, err := readResponse(bufio.NewReader(bytes.NewReader(data)), maxBody)
		if err == nil && resp == nil {
			t.Fatal("readResponse() = nil, nil")
		}
		if reusable && err != nil {
			t.Fatalf("readResponse() reusable with error %v", err)
		}
		if resp == nil {
			return
		}
		if resp.Status < 200 || resp.Status > 999 {
			t.Errorf("Status = %d", resp.Status)
		}
		if int64(len(resp.Body)) > maxBody {
			t.Errorf("len(Body) = %d > maxBody %d", len(resp.Body), maxBody)
		}
		if errors.Is(err, ErrBodyTooLarge) && int64(len(resp.Body)) != maxBody {
			t.Errorf("body too large but len(Body) = %d, want %d", len(resp.Body), maxBody)
		}
		for _, f := range resp.Header {
			if !validName(f[0]) || !validValue(f[1]) {
				t.Errorf("invalid field %q accepted", f)
			}
		}
	})
}
