// The Gateway API conformance suite of the module version in go.mod, compiled by
// hack/install-gateway-api.sh with `go test -c` into one binary, so that it runs
// without a Go toolchain or a checkout of gateway-api: the suite's manifests are
// embedded in sigs.k8s.io/gateway-api/conformance.
//
// The binary takes upstream's flags (sigs.k8s.io/gateway-api/conformance/utils/flags:
// -gateway-class, -supported-features, -report-output, …), controller-runtime's
// -kubeconfig (or $KUBECONFIG) and the go test flags (-test.run, -test.v,
// -test.timeout, …). See docs/development.md.
//
// One addition for the local stack: with $SKYLIFT_CONFORMANCE_DIAL_MAP naming a
// dial map (written by dev/conformance.ts, format in dev/conformanceDialMap.ts),
// the suite's HTTP requests to a Gateway's address (an ALB DNS name, which
// resolves nowhere locally) go to where the ALB data plane serves that listener.
package gatewayapi_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/url"
	"os"
	"strings"
	"testing"

	"sigs.k8s.io/gateway-api/conformance"
	"sigs.k8s.io/gateway-api/conformance/utils/config"
	"sigs.k8s.io/gateway-api/conformance/utils/roundtripper"
)

// dialMapEnv names the dial map file; unset, the suite dials as upstream's does.
const dialMapEnv = "SKYLIFT_CONFORMANCE_DIAL_MAP"

// dialMap is the file's content: "dnsname:port" (lower case) → "host:port".
type dialMap struct {
	Version   int               `json:"version"`
	Addresses map[string]string `json:"addresses"`
}

// TestConformance runs the suite as upstream's own conformance_test.go does, with
// the options its flags give, and the dial map's round tripper when one is named.
func TestConformance(t *testing.T) {
	opts := conformance.DefaultOptions(t)
	if path := os.Getenv(dialMapEnv); path != "" {
		t.Logf("dialing Gateway addresses through the dial map %s", path)
		// What NewConformanceTestSuite does before it makes its default round tripper.
		config.SetupTimeoutConfig(&opts.TimeoutConfig)
		opts.RoundTripper = &roundtripper.DefaultRoundTripper{
			Debug:             opts.Debug,
			TimeoutConfig:     opts.TimeoutConfig,
			CustomDialContext: dialThrough(path),
		}
	}
	conformance.RunConformanceWithOptions(t, opts)
}

// probeURLEnv names a URL for TestDialMapProbe.
const probeURLEnv = "SKYLIFT_CONFORMANCE_PROBE_URL"

// TestDialMapProbe is not part of the suite (the runner runs only TestConformance): with
// $SKYLIFT_CONFORMANCE_PROBE_URL and the dial map set, it sends one GET there as the suite sends
// its requests (upstream's DefaultRoundTripper, through the dial map) and logs what came back, so
// test/integration/conformanceDialMap.test.ts can prove the seam end to end. Skipped otherwise.
func TestDialMapProbe(t *testing.T) {
	target, path := os.Getenv(probeURLEnv), os.Getenv(dialMapEnv)
	if target == "" || path == "" {
		t.Skipf("needs %s and %s", probeURLEnv, dialMapEnv)
	}
	u, err := url.Parse(target)
	if err != nil {
		t.Fatalf("%s: %v", probeURLEnv, err)
	}
	rt := &roundtripper.DefaultRoundTripper{TimeoutConfig: config.DefaultTimeoutConfig(), CustomDialContext: dialThrough(path)}
	req, res, err := rt.CaptureRoundTrip(roundtripper.Request{T: t, URL: *u, Host: u.Host, Protocol: "HTTP"})
	if err != nil {
		t.Fatalf("probe: %v", err)
	}
	t.Logf("probe: status %d; the echo server saw path %s host %s pod %s", res.StatusCode, req.Path, req.Host, req.Pod)
}

// dialThrough dials an address the map at path names where the map says, and any
// other address as given. The file is read at every dial: the runner rewrites it
// (atomically) as load balancers and listeners come and go.
func dialThrough(path string) func(context.Context, string, string) (net.Conn, error) {
	var d net.Dialer
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		to, found, err := lookup(path, addr)
		if err != nil {
			return nil, err
		}
		if !found {
			conn, err := d.DialContext(ctx, network, addr)
			if err != nil {
				return nil, fmt.Errorf("%s is not in the dial map %s (no ALB data plane listener for it yet?): %w", addr, path, err)
			}
			return conn, nil
		}
		conn, err := d.DialContext(ctx, network, to)
		if err != nil {
			return nil, fmt.Errorf("%s, served by the ALB data plane at %s: %w", addr, to, err)
		}
		return conn, nil
	}
}

// lookup reads the dial map at path and returns where addr ("host:port") is served.
func lookup(path, addr string) (string, bool, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "", false, err
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return "", false, fmt.Errorf("reading the dial map: %w", err)
	}
	var m dialMap
	if err := json.Unmarshal(data, &m); err != nil {
		return "", false, fmt.Errorf("reading the dial map %s: %w", path, err)
	}
	if m.Version != 1 {
		return "", false, fmt.Errorf("the dial map %s has version %d, this binary reads 1", path, m.Version)
	}
	to, found := m.Addresses[net.JoinHostPort(strings.ToLower(host), port)]
	return to, found, nil
}
