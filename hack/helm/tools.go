//go:build tools

// Package helm pins the Helm CLI that Skylift's tests render the chart with.
package helm

import (
	_ "helm.sh/helm/v4/cmd/helm"
)
