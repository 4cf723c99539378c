// The Gateway API conformance suite of the module version in go.mod, compiled by
// hack/install-gateway-api.sh with `go test -c` into one binary, so that it runs
// without a Go toolchain or a checkout of gateway-api: the suite's manifests are
// embedded in sigs.k8s.io/gateway-api/conformance.
//
// The binary takes upstream's flags (sigs.k8s.io/gateway-api/conformance/utils/flags:
// -gateway-class, -supported-features, -report-output, …), controller-runtime's
// -kubeconfig (or $KUBECONFIG) and the go test flags (-test.run, -test.v,
// -test.timeout, …). See docs/development.md.
package gatewayapi_test

import (
	"testing"

	"sigs.k8s.io/gateway-api/conformance"
)

// TestConformance runs the suite as upstream's own conformance_test.go does, with
// the options its flags give.
func TestConformance(t *testing.T) {
	conformance.RunConformance(t)
}
