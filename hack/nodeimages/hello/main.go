// Command hello is the sample app of Skylift's local node: an HTTP server on
// $PORT (default 8080) answering every path with its hostname and address, so
// a test can tell which Pod answered. Exits on SIGTERM.
//
// `hello get URL` instead GETs URL once with the Pod's service-account token
// and CA (as an in-cluster client does), prints the status and body, and
// exits 0 on a 2xx answer: a probe that the Pod reaches the apiserver through
// the `kubernetes` Service.
package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"
)

const saDir = "/var/run/secrets/kubernetes.io/serviceaccount"

func main() {
	if len(os.Args) == 3 && os.Args[1] == "get" {
		os.Exit(get(os.Args[2]))
	}
	port := os.Getenv("PORT")
	if port == "" {
		port = "8080"
	}
	host, _ := os.Hostname()
	srv := &http.Server{
		Addr:              ":" + port,
		ReadHeaderTimeout: 5 * time.Second,
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			local := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
			fmt.Fprintf(w, "hello from %s at %s\n", host, local)
		}),
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	go func() {
		<-ctx.Done()
		shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(shutdown)
	}()
	if err := srv.ListenAndServe(); err != nil && err != http.ErrServerClosed {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

func get(url string) int {
	pool := x509.NewCertPool()
	if ca, err := os.ReadFile(saDir + "/ca.crt"); err == nil {
		pool.AppendCertsFromPEM(ca)
	}
	client := &http.Client{
		Timeout:   10 * time.Second,
		Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}},
	}
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		fmt.Println(err)
		return 2
	}
	if token, err := os.ReadFile(saDir + "/token"); err == nil {
		req.Header.Set("Authorization", "Bearer "+string(token))
	}
	res, err := client.Do(req)
	if err != nil {
		fmt.Println(err)
		return 1
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(res.Body, 2048))
	fmt.Printf("%s -> %s\n%s\n", url, res.Status, body)
	if res.StatusCode/100 != 2 {
		return 1
	}
	return 0
}
