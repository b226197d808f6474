package sim_test

import (
	"testing"
	"time"

	"github.com/blitz-go/blitz"
	"github.com/blitz-go/blitz/sim"
)

// TestReadme is the README's simulation example: a server and a client on
// two hosts, a partition in the middle of the exchange, 20 seeds.
func TestReadme(t *testing.T) {
	sim.Check(t, sim.Options{Strategy: sim.PCT(3, 200)}, 20, func(t *testing.T, w *sim.World) {
		server, _ := blitz.New(w.MustHost("server", "10.0.0.1").Config())
		client, _ := blitz.New(w.MustHost("client", "10.0.0.2").Config())
		ln, err := blitz.ListenTCP(server.Handle(), ":7")
		if err != nil {
			t.Fatal(err)
		}
		accepted := blitz.SpawnOn(server.Handle(), ln.Accept())

		w.Network().Partition([]string{"server"}, []string{"client"})
		dial := blitz.SpawnOn(client.Handle(), blitz.DialTCP(client.Handle(), "server:7", 0))
		_, _ = blitz.BlockOn(t.Context(), client.Handle(), blitz.Sleep(time.Second)) // 1 s of virtual time
		w.Network().Heal()

		// The SYN lost in the partition is sent again after 1 s: the
		// connect goes through after the heal.
		conn, err := blitz.BlockOn(t.Context(), client.Handle(), dial)
		if err != nil || conn.Value.Err != nil {
			t.Fatalf("dial: %v %v", err, conn.Value.Err)
		}
		in, err := blitz.BlockOn(t.Context(), server.Handle(), accepted)
		if err != nil || in.Value.Err != nil {
			t.Fatalf("accept: %v %v", err, in.Value.Err)
		}
		if w.Now() < time.Second {
			t.Fatalf("connected at %v of virtual time, before the heal", w.Now())
		}
	})
}
