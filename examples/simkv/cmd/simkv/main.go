// Command simkv runs one replica of the simkv store (see the package
// github.com/blitz-go/blitz/examples/simkv) on a real runtime.
//
// Three replicas on one machine, the leader first:
//
//	R=127.0.0.1:7000/127.0.0.1:7001,127.0.0.1:7010/127.0.0.1:7011,127.0.0.1:7020/127.0.0.1:7021
//	go run ./simkv/cmd/simkv -replicas $R -self 1 -log /tmp/kv1.log &
//	go run ./simkv/cmd/simkv -replicas $R -self 2 -log /tmp/kv2.log &
//	go run ./simkv/cmd/simkv -replicas $R -self 0 -log /tmp/kv0.log
//	printf 'PUT x 1\nGET x\n' | nc 127.0.0.1 7000
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/blitz-go/blitz"
	"github.com/blitz-go/blitz/examples/simkv"
)

func main() {
	replicas := flag.String("replicas", "127.0.0.1:7000/127.0.0.1:7001,127.0.0.1:7010/127.0.0.1:7011,127.0.0.1:7020/127.0.0.1:7021",
		"the replicas' client/peer addresses, comma-separated, the leader first")
	self := flag.Int("self", 0, "this replica's index in -replicas (0: the leader)")
	logPath := flag.String("log", "simkv.log", "the replica's log file")
	bug := flag.Bool("ack-before-sync", false, "the deliberate bug: acknowledge writes before the fsync and the replication")
	flag.Parse()
	addrs, err := parseReplicas(*replicas)
	if err != nil {
		log.Fatal(err)
	}
	cfg := simkv.Config{Self: *self, Replicas: addrs, LogPath: *logPath, AckBeforeSync: *bug}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, cfg); err != nil {
		log.Fatal(err)
	}
}

// run starts the replica on a new runtime and serves until ctx ends.
func run(ctx context.Context, cfg simkv.Config) error {
	rt, err := blitz.New(blitz.Config{})
	if err != nil {
		return err
	}
	defer rt.Shutdown(context.Background())
	r, err := simkv.Start(rt.Handle(), cfg)
	if err != nil {
		return err
	}
	role := "follower"
	if r.IsLeader() {
		role = "leader"
	}
	log.Printf("simkv: replica %d (%s), clients on %s, peers on %s", cfg.Self, role, cfg.Replicas[cfg.Self].Client, cfg.Replicas[cfg.Self].Peer)
	if err := r.Wait(ctx); err != nil && ctx.Err() == nil {
		return err
	}
	return nil
}

// parseReplicas parses "client/peer,client/peer,...".
func parseReplicas(s string) ([]simkv.Addr, error) {
	var addrs []simkv.Addr
	for part := range strings.SplitSeq(s, ",") {
		client, peer, ok := strings.Cut(strings.TrimSpace(part), "/")
		if !ok || client == "" || peer == "" {
			return nil, fmt.Errorf("simkv: bad replica %q, want client-addr/peer-addr", part)
		}
		addrs = append(addrs, simkv.Addr{Client: client, Peer: peer})
	}
	return addrs, nil
}
