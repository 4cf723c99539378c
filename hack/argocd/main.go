// Command argocd is Argo CD's multi-call binary cut down to the two
// components Skylift's end-to-end test runs: the application controller and
// the repo server. It dispatches on its name (argv[0]) or ARGOCD_BINARY_NAME,
// as upstream's cmd/main.go does. The other components (API server with its
// embedded UI, Dex, ApplicationSet, notifications, CLI) are not linked in.
package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"
	"k8s.io/klog/v2"

	appcontroller "github.com/argoproj/argo-cd/v3/cmd/argocd-application-controller/commands"
	reposerver "github.com/argoproj/argo-cd/v3/cmd/argocd-repo-server/commands"
	"github.com/argoproj/argo-cd/v3/common"
	"github.com/argoproj/argo-cd/v3/util/log"
)

func init() {
	// As upstream: klog follows Argo CD's log level and format.
	klog.SetLogger(log.NewLogrusLogger(log.NewWithCurrentConfig()))
}

func main() {
	// Upstream's main calls util/grpc.DisableSRVLookups here, to undo what
	// grpc's grpclb balancer turns on in its init (DNS SRV lookups for every
	// gRPC dial). Neither component here links grpclb, so the lookups are off
	// already, and that function panics when it finds them off.
	name := filepath.Base(os.Args[0])
	if v := os.Getenv("ARGOCD_BINARY_NAME"); v != "" {
		name = v
	}
	var command *cobra.Command
	switch name {
	case common.CommandApplicationController:
		command = appcontroller.NewCommand()
	case common.CommandRepoServer:
		command = reposerver.NewCommand()
	default:
		fmt.Fprintf(os.Stderr, "argocd: run as %s or %s (argv[0] or ARGOCD_BINARY_NAME), not %q\n",
			common.CommandApplicationController, common.CommandRepoServer, name)
		os.Exit(2)
	}
	if err := command.Execute(); err != nil {
		os.Exit(1)
	}
}
