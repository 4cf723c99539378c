// Command pause is the pod sandbox ("pause") image of Skylift's local node: it
// holds a Pod's namespaces open, reaps zombies as PID 1, and exits on SIGTERM
// or SIGINT. No registry is reachable where the node runs, so it is built here.
package main

import (
	"os"
	"os/signal"
	"syscall"
)

func main() {
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT, syscall.SIGCHLD)
	for s := range sigs {
		if s == syscall.SIGCHLD {
			for {
				pid, err := syscall.Wait4(-1, nil, syscall.WNOHANG, nil)
				if pid <= 0 || err != nil {
					break
				}
			}
			continue
		}
		os.Exit(0)
	}
}
