// Command etcd is etcd's own server main, built from the Go module proxy so
// tests and the local fleet do not need a release download.
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() { etcdmain.Main(os.Args) }
