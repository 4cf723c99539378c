// CoreDNS v1.12.2 with only the plugins the Gateway API conformance suite's CoreDNS uses (its
// base manifests' Corefile: forward, log, errors in the root zone; whoami in foo.bar.com), for the
// image registry.k8s.io/coredns/coredns:v1.12.2 that hack/install-node-runtime.sh builds: no
// registry serves that image here. The upstream binary registers every plugin in
// core/plugin/zplugin.go and orders the chain by core/dnsserver/zdirectives.go; this one registers
// four and keeps their order from that list (errors, log, forward, whoami).
package main

import (
	"github.com/coredns/coredns/core/dnsserver"
	"github.com/coredns/coredns/coremain"

	_ "github.com/coredns/coredns/plugin/errors"
	_ "github.com/coredns/coredns/plugin/forward"
	_ "github.com/coredns/coredns/plugin/log"
	_ "github.com/coredns/coredns/plugin/whoami"
)

// The plugin chain's order, as upstream's zdirectives.go has these four.
var directives = []string{"errors", "log", "forward", "whoami"}

func init() {
	dnsserver.Directives = directives
}

func main() {
	coremain.Run()
}
