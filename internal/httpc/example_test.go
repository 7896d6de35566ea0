package httpc_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"

	"github.com/vigil-iot/vigil/internal/httpc"
)

func ExampleClient_Post() {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"echo":%s}`, b)
	}))
	defer srv.Close()

	var c httpc.Client // reuses one connection between calls
	defer c.CloseIdle()
	resp, err := c.Post(context.Background(), srv.URL+"/v1/echo",
		httpc.Header{{"Content-Type", "application/json"}}, []byte(`{"a":1}`), 1<<10)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(resp.Status, resp.Header.Get("content-type"), string(resp.Body))
	// Output: 200 application/json {"echo":{"a":1}}
}
