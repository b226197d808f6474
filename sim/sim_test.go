package sim_test

import (
	"context"
	"errors"
	"io"
	"net/netip"
	"os"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/blitz-go/blitz"
	"github.com/blitz-go/blitz/future"
	"github.com/blitz-go/blitz/sim"
)

// world runs f on a fresh World of opts inside a bubble, and closes it.
func world(t *testing.T, opts sim.Options, f func(t *testing.T, w *sim.World)) {
	t.Helper()
	synctest.Test(t, func(t *testing.T) {
		w := sim.New(opts)
		defer w.Close()
		f(t, w)
	})
}

// start makes a runtime on h, failing the test on an error.
func start(t *testing.T, h *sim.Host) *blitz.Runtime {
	t.Helper()
	rt, err := blitz.New(h.Config())
	if err != nil {
		t.Fatalf("blitz.New on host %s: %v", h.Name(), err)
	}
	if !rt.Simulated() {
		t.Fatal("a runtime made from a host's Config is not simulated")
	}
	return rt
}

// block waits for f on rt, driving the world.
func block[T any](t *testing.T, rt *blitz.Runtime, f future.Future[T]) T {
	t.Helper()
	v, err := blitz.BlockOn(context.Background(), rt.Handle(), f)
	if err != nil {
		t.Fatalf("BlockOn: %v", err)
	}
	return v
}

func TestVirtualTimeJumps(t *testing.T) {
	world(t, sim.Options{Seed: 1}, func(t *testing.T, w *sim.World) {
		rt := start(t, w.MustHost("a", "10.0.0.1"))
		begin := time.Now()
		real0 := w.Steps()
		block(t, rt, blitz.Sleep(time.Hour))
		if got := time.Since(begin); got < time.Hour || got > time.Hour+10*time.Millisecond {
			t.Fatalf("a 1 h sleep took %v of virtual time", got)
		}
		if w.Now() < time.Hour {
			t.Fatalf("World.Now = %v after a 1 h sleep", w.Now())
		}
		if w.Steps() == real0 {
			t.Fatal("no step was taken")
		}
	})
}

// racyCounter runs workers tasks that each add to a shared counter n times
// with a read, a yield and a write: a lost update unless the polls happen
// not to interleave. It returns the final count.
func racyCounter(t *testing.T, w *sim.World, workers, n int) int {
	rt := start(t, w.MustHost("a", "10.0.0.1"))
	counter := 0
	var set blitz.JoinSet[struct{}]
	defer set.Close()
	for range workers {
		done, read := 0, -1
		set.SpawnOn(rt.Handle(), future.PollFn(func(cx *future.Context) (struct{}, bool) {
			for done < n {
				if read < 0 {
					read = counter
					cx.Yield() // between the read and the write
					return struct{}{}, false
				}
				counter, read = read+1, -1
				done++
			}
			return struct{}{}, true
		}))
	}
	r := block(t, rt, set.Values())
	if r.Err != nil {
		t.Fatalf("a worker failed: %v", r.Err)
	}
	return counter
}

func TestSameSeedSameTrace(t *testing.T) {
	hashes := map[uint64]uint64{}
	for _, seed := range []uint64{1, 2, 3, 4, 5, 6} {
		var first, second uint64
		var c1, c2 int
		world(t, sim.Options{Seed: seed}, func(t *testing.T, w *sim.World) {
			c1 = racyCounter(t, w, 3, 5)
			first = w.TraceHash()
		})
		world(t, sim.Options{Seed: seed}, func(t *testing.T, w *sim.World) {
			c2 = racyCounter(t, w, 3, 5)
			second = w.TraceHash()
		})
		if first != second || c1 != c2 {
			t.Fatalf("seed %d: hashes %#x and %#x, counts %d and %d", seed, first, second, c1, c2)
		}
		hashes[first] = seed
	}
	if len(hashes) < 5 {
		t.Fatalf("6 seeds gave %d distinct traces", len(hashes))
	}
}

func TestStrategiesFindTheLostUpdate(t *testing.T) {
	for _, st := range []sim.Strategy{sim.Random(), sim.PCT(2, 10)} {
		found := 0
		for seed := range uint64(20) {
			world(t, sim.Options{Seed: seed, Strategy: st}, func(t *testing.T, w *sim.World) {
				if racyCounter(t, w, 2, 3) != 6 {
					found++
				}
			})
		}
		t.Logf("%v: the lost update in %d of 20 seeds", st, found)
		if found == 0 {
			t.Errorf("%v never found the lost update in 20 seeds", st)
		}
	}
}

func TestDeadlockIsReported(t *testing.T) {
	world(t, sim.Options{Seed: 1}, func(t *testing.T, w *sim.World) {
		rt := start(t, w.MustHost("a", "10.0.0.1"))
		never := future.PollFn(func(cx *future.Context) (int, bool) {
			cx.Waker() // taken and dropped: nothing will ever wake it
			return 0, false
		})
		_, err := blitz.BlockOn(context.Background(), rt.Handle(), never)
		if !errors.Is(err, sim.ErrDeadlock) {
			t.Fatalf("BlockOn on a future nothing wakes: %v, want ErrDeadlock", err)
		}
	})
}

func TestStepLimit(t *testing.T) {
	world(t, sim.Options{Seed: 1, MaxSteps: 100}, func(t *testing.T, w *sim.World) {
		rt := start(t, w.MustHost("a", "10.0.0.1"))
		spin := future.PollFn(func(cx *future.Context) (int, bool) {
			cx.Yield()
			return 0, false
		})
		_, err := blitz.BlockOn(context.Background(), rt.Handle(), spin)
		if !errors.Is(err, sim.ErrStepLimit) {
			t.Fatalf("a task yielding forever: %v, want ErrStepLimit", err)
		}
	})
}

func TestGoroutineWorkIsRefused(t *testing.T) {
	world(t, sim.Options{Seed: 1}, func(t *testing.T, w *sim.World) {
		rt := start(t, w.MustHost("a", "10.0.0.1"))
		r := block(t, rt, blitz.Blocking(func() (int, error) { return 1, nil }))
		if err := r.Err; !errors.Is(err, blitz.ErrSimulated) {
			t.Fatalf("a blocking call under simulation: %v, want ErrSimulated", err)
		}
	})
}

func TestResolveNamesHosts(t *testing.T) {
	world(t, sim.Options{Seed: 1}, func(t *testing.T, w *sim.World) {
		rt := start(t, w.MustHost("a", "10.0.0.1"))
		w.MustHost("db", "10.0.0.2")
		r := block(t, rt, blitz.Resolve("db"))
		if r.Err != nil || len(r.Value) != 1 || r.Value[0] != netip.MustParseAddr("10.0.0.2") {
			t.Fatalf("Resolve(db) = %v, %v", r.Value, r.Err)
		}
		r = block(t, rt, blitz.Resolve("nowhere"))
		if r.Err == nil {
			t.Fatal("Resolve of an unknown host succeeded")
		}
	})
}

func TestHostMisuse(t *testing.T) {
	world(t, sim.Options{Seed: 1}, func(t *testing.T, w *sim.World) {
		h := w.MustHost("a", "10.0.0.1")
		for _, bad := range [][2]string{{"a", "10.0.0.9"}, {"b", "10.0.0.1"}, {"c", "not an address"}, {"", "10.0.0.3"}} {
			if _, err := w.Host(bad[0], bad[1]); !errors.Is(err, sim.ErrConfig) {
				t.Errorf("Host(%q, %q): %v, want ErrConfig", bad[0], bad[1], err)
			}
		}
		start(t, h)
		if _, err := blitz.New(h.Config()); !errors.Is(err, blitz.ErrConfig) {
			t.Errorf("a second runtime on a host: %v, want ErrConfig", err)
		}
	})
}

func TestBuggify(t *testing.T) {
	if blitz.Buggify(nil) {
		t.Fatal("Buggify outside a simulation fired")
	}
	fired := 0
	for seed := range uint64(40) {
		world(t, sim.Options{Seed: seed}, func(t *testing.T, w *sim.World) {
			rt := start(t, w.MustHost("a", "10.0.0.1"))
			fired += block(t, rt, future.PollFn(func(cx *future.Context) (int, bool) {
				n := 0
				for range 20 {
					if blitz.Buggify(cx) {
						n++
					}
				}
				return n, true
			}))
		})
	}
	// A site is on in about 1/4 of the runs and then fires about 1/4 of
	// its calls: about 40 * 1/4 * 20 * 1/4 = 50 in all.
	if fired == 0 || fired > 400 {
		t.Fatalf("Buggify fired %d times in 40 runs of 20 calls", fired)
	}
}

func TestTCPBetweenHosts(t *testing.T) {
	world(t, sim.Options{Seed: 7}, func(t *testing.T, w *sim.World) {
		w.Network().SetLatency(time.Millisecond, 3*time.Millisecond)
		srv := start(t, w.MustHost("server", "10.0.0.1"))
		cli := start(t, w.MustHost("client", "10.0.0.2"))
		ln, err := blitz.ListenTCP(srv.Handle(), "10.0.0.1:7")
		if err != nil {
			t.Fatal(err)
		}
		defer ln.Close()
		begin := time.Now()
		dial := blitz.SpawnOn(cli.Handle(), blitz.DialTCP(cli.Handle(), "server:7", time.Second))
		in := ok(t, block(t, srv, ln.Accept()))
		defer in.Close()
		out := ok(t, ok(t, block(t, cli, dial)))
		defer out.Close()
		ok(t, block(t, cli, out.WriteAll([]byte("hello"))))
		buf := make([]byte, 16)
		n := ok(t, block(t, srv, in.Read(buf)))
		ok(t, block(t, srv, in.WriteAll(buf[:n])))
		got := make([]byte, 16)
		m := ok(t, block(t, cli, out.Read(got)))
		if string(got[:m]) != "hello" {
			t.Fatalf("echo: %q", got[:m])
		}
		// The connect (one round trip) and the echo (another): at least
		// 4 one-way latencies of 1 ms.
		if d := time.Since(begin); d < 4*time.Millisecond || d > time.Second {
			t.Fatalf("the echo took %v of virtual time", d)
		}
		// Both ends close: the server reads the end of the stream.
		if err := out.Close(); err != nil {
			t.Fatal(err)
		}
		if r := block(t, srv, in.Read(buf)); r.Value != 0 || !errors.Is(r.Err, io.EOF) {
			t.Fatalf("read after the peer's close: %d bytes, %v; want io.EOF", r.Value, r.Err)
		}
	})
}

// ok returns r's value, failing the test on its error.
func ok[T any](t *testing.T, r future.Result[T]) T {
	t.Helper()
	if r.Err != nil {
		t.Fatal(r.Err)
	}
	return r.Value
}

// TestCheckRunsSeeds runs a body under Check and counts the seeds it saw.
func TestCheckRunsSeeds(t *testing.T) {
	var seeds []uint64
	var mu sync.Mutex
	t.Run("check", func(t *testing.T) {
		sim.Check(t, sim.Options{Twice: true}, 4, func(t *testing.T, w *sim.World) {
			if racyCounter(t, w, 2, 2) < 2 {
				t.Error("fewer increments than one task's")
			}
			mu.Lock()
			seeds = append(seeds, w.Seed())
			mu.Unlock()
		})
	})
	if len(seeds) != 8 {
		t.Fatalf("Check ran %d runs, want 4 seeds twice", len(seeds))
	}
}

func TestFilesFollowFsyncAcrossACrash(t *testing.T) {
	world(t, sim.Options{Seed: 3}, func(t *testing.T, w *sim.World) {
		h := w.MustHost("db", "10.0.0.1")
		rt := start(t, h)
		f := ok(t, block(t, rt, blitz.OpenFile("/data/log", os.O_RDWR|os.O_CREATE|os.O_APPEND, 0o644)))
		ok(t, block(t, rt, f.Write([]byte("synced\n"))))
		ok(t, block(t, rt, f.Sync()))
		ok(t, block(t, rt, f.Write([]byte("lost\n"))))
		if got, _ := h.Disk().ReadFile("/data/log"); string(got) != "synced\nlost\n" {
			t.Fatalf("before the crash the disk holds %q", got)
		}
		h.Crash()
		if h.Runtime() != nil {
			t.Fatal("a crashed host still has a runtime")
		}
		if _, err := blitz.BlockOn(context.Background(), rt.Handle(), blitz.Sleep(time.Second)); err == nil {
			t.Fatal("BlockOn on a crashed host's runtime succeeded")
		}
		rt = start(t, h)
		buf := make([]byte, 64)
		g := ok(t, block(t, rt, blitz.Open("/data/log")))
		n := ok(t, block(t, rt, g.Read(buf)))
		if string(buf[:n]) != "synced\n" {
			t.Fatalf("after the crash the file holds %q, want what was synced", buf[:n])
		}
		ok(t, block(t, rt, g.Close()))
	})
}

// fanIn connects clients clients to a server at once, each sending its
// number, and returns the order in which the server read them and the
// world's trace hash.
func fanIn(t *testing.T, seed uint64, clients int) (order string, hash uint64) {
	world(t, sim.Options{Seed: seed}, func(t *testing.T, w *sim.World) {
		w.Network().SetLatency(100*time.Microsecond, 5*time.Millisecond)
		srv := start(t, w.MustHost("server", "10.0.0.1"))
		cli := start(t, w.MustHost("client", "10.0.0.2"))
		ln, err := blitz.ListenTCP(srv.Handle(), ":80")
		if err != nil {
			t.Fatal(err)
		}
		defer ln.Close()
		var sends []blitz.JoinHandle[future.Result[int]]
		for i := range clients {
			dial := blitz.DialTCP(cli.Handle(), "server:80", time.Second)
			sends = append(sends, blitz.SpawnOn(cli.Handle(), future.Then(dial, func(r future.Result[*blitz.TCPStream]) future.Future[future.Result[int]] {
				if r.Err != nil {
					return future.Ready(future.Fail[int](r.Err))
				}
				return r.Value.Write([]byte{byte('a' + i)})
			})))
		}
		for range clients {
			in := ok(t, block(t, srv, ln.Accept()))
			buf := make([]byte, 1)
			if n := ok(t, block(t, srv, in.Read(buf))); n != 1 {
				t.Fatalf("read %d bytes", n)
			}
			order += string(buf)
			in.Close()
		}
		for _, s := range sends {
			ok(t, ok(t, block(t, cli, s)))
		}
		hash = w.TraceHash()
	})
	return order, hash
}

func TestNetworkRunsRepeat(t *testing.T) {
	orders := map[string]bool{}
	for seed := range uint64(8) {
		o1, h1 := fanIn(t, seed, 6)
		o2, h2 := fanIn(t, seed, 6)
		if o1 != o2 || h1 != h2 {
			t.Fatalf("seed %d: orders %q and %q, hashes %#x and %#x", seed, o1, o2, h1, h2)
		}
		orders[o1] = true
	}
	if len(orders) < 4 {
		t.Fatalf("8 seeds gave %d distinct arrival orders: %v", len(orders), orders)
	}
}

func TestDatagramsAndLoss(t *testing.T) {
	world(t, sim.Options{Seed: 11}, func(t *testing.T, w *sim.World) {
		a := start(t, w.MustHost("a", "10.0.0.1"))
		b := start(t, w.MustHost("b", "10.0.0.2"))
		sa, err := blitz.BindUDP(a.Handle(), "10.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer sa.Close()
		sb, err := blitz.BindUDP(b.Handle(), "10.0.0.2:53")
		if err != nil {
			t.Fatal(err)
		}
		defer sb.Close()
		to := netip.MustParseAddrPort("10.0.0.2:53")
		ok(t, block(t, a, sa.SendTo([]byte("ping"), to)))
		buf := make([]byte, 16)
		r := ok(t, block(t, b, sb.RecvFrom(buf)))
		if string(buf[:r.N]) != "ping" || r.From.Addr() != netip.MustParseAddr("10.0.0.1") {
			t.Fatalf("received %q from %v", buf[:r.N], r.From)
		}
		// Every datagram lost: the receive times out in virtual time.
		w.Network().SetLoss(1)
		ok(t, block(t, a, sa.SendTo([]byte("lost"), to)))
		sb.SetReadTimeout(time.Second)
		begin := time.Now()
		if res := block(t, b, sb.RecvFrom(buf)); !errors.Is(res.Err, blitz.ErrTimeout) {
			t.Fatalf("a receive with every datagram lost: %v, want a timeout", res.Err)
		}
		if d := time.Since(begin); d < time.Second || d > 2*time.Second {
			t.Fatalf("the read timeout of 1 s ended after %v of virtual time", d)
		}
	})
}

func TestSignalsAndProcessesAreRefused(t *testing.T) {
	world(t, sim.Options{Seed: 1}, func(t *testing.T, w *sim.World) {
		rt := start(t, w.MustHost("a", "10.0.0.1"))
		if _, err := blitz.Signals(os.Interrupt); !errors.Is(err, blitz.ErrSimulated) {
			t.Fatalf("signals under simulation: %v, want ErrSimulated", err)
		}
		if r := block(t, rt, blitz.Command("true").Spawn(rt.Handle())); !errors.Is(r.Err, blitz.ErrSimulated) {
			t.Fatalf("a process spawned under simulation: %v, want ErrSimulated", r.Err)
		}
	})
}

// echoOnce is a Serve handler: it echoes one read and closes.
func echoOnce(c *blitz.TCPStream) future.Future[error] {
	buf := make([]byte, 16)
	return future.Then(c.Read(buf), func(r future.Result[int]) future.Future[error] {
		if r.Err != nil {
			c.Close()
			return future.Ready(r.Err)
		}
		return future.Map(c.WriteAll(buf[:r.Value]), func(w future.Result[int]) error {
			c.Close()
			return w.Err
		})
	})
}

func TestServeUnderSimulation(t *testing.T) {
	world(t, sim.Options{Seed: 5, Strategy: sim.PCT(3, 300)}, func(t *testing.T, w *sim.World) {
		srv := start(t, w.MustHost("server", "10.0.0.1"))
		cli := start(t, w.MustHost("client", "10.0.0.2"))
		ln, err := blitz.ListenTCP(srv.Handle(), ":7")
		if err != nil {
			t.Fatal(err)
		}
		served := blitz.SpawnOn(srv.Handle(), blitz.Serve(ln, echoOnce, blitz.ServeConfig{Stop: blitz.Sleep(time.Minute), Grace: time.Second}))
		var echoes []blitz.JoinHandle[future.Result[int]]
		for i := range 3 {
			msg := []byte{byte('x' + i)}
			echoes = append(echoes, blitz.SpawnOn(cli.Handle(), future.Then(blitz.DialTCP(cli.Handle(), "server:7", time.Second),
				func(r future.Result[*blitz.TCPStream]) future.Future[future.Result[int]] {
					if r.Err != nil {
						return future.Ready(future.Fail[int](r.Err))
					}
					return future.Then(r.Value.WriteAll(msg), func(future.Result[int]) future.Future[future.Result[int]] {
						return r.Value.Read(make([]byte, 1))
					})
				})))
		}
		for _, e := range echoes {
			if n := ok(t, ok(t, block(t, cli, e))); n != 1 {
				t.Fatalf("echo read %d bytes", n)
			}
		}
		stats := ok(t, block(t, srv, served))
		if stats.Accepted != 3 || stats.Completed != 3 || stats.Failed != 0 || w.Now() < time.Minute {
			t.Fatalf("Serve: %+v at %v", stats, w.Now())
		}
	})
}

func TestRandIsTheRunsSource(t *testing.T) {
	draw := func(seed uint64) (n int) {
		world(t, sim.Options{Seed: seed}, func(t *testing.T, w *sim.World) {
			rt := start(t, w.MustHost("a", "10.0.0.1"))
			n = block(t, rt, future.PollFn(func(cx *future.Context) (int, bool) {
				return blitz.Rand(cx).IntN(1 << 30), true
			}))
		})
		return n
	}
	first, again := draw(1), draw(1)
	if first != again {
		t.Fatal("blitz.Rand under simulation gave two values for one seed")
	}
	if first == draw(2) && first == draw(3) {
		t.Fatal("blitz.Rand gave the same value for three seeds")
	}
	if blitz.Rand(nil) == nil {
		t.Fatal("blitz.Rand outside a runtime gave no source")
	}
}

func TestHostSetConfig(t *testing.T) {
	world(t, sim.Options{Seed: 1}, func(t *testing.T, w *sim.World) {
		h := w.MustHost("a", "10.0.0.1")
		h.SetConfig(blitz.Config{TimerTick: 10 * time.Millisecond, Workers: 8})
		if cfg := h.Config(); cfg.TimerTick != 10*time.Millisecond || cfg.Simulation == nil {
			t.Fatalf("Config after SetConfig: %+v", cfg)
		}
		rt := start(t, h)
		begin := time.Now()
		block(t, rt, blitz.Sleep(time.Millisecond))
		if d := time.Since(begin); d < 10*time.Millisecond {
			t.Fatalf("a 1 ms sleep with a 10 ms tick took %v", d)
		}
	})
}
