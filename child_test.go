package blitz_test

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/blitz-go/blitz"
)

// childFlag makes the test binary act as the child program of the process
// tests (runChild), so that they need no sh, cat or sleep and run on
// Windows (under Wine here) as on Unix.
const childFlag = "-blitz.child"

// childCmd is a Command running this test binary as the child program
// with the given act; see runChild for the acts.
func childCmd(act ...string) *blitz.Cmd {
	return blitz.Command(childPath(), append([]string{childFlag}, act...)...)
}

// childPath is the test binary's absolute path: os.Args[0] may be relative
// (a binary built with go test -c and started as ./x.test), and a relative
// program path is resolved against the command's Dir.
func childPath() string {
	if p, err := os.Executable(); err == nil {
		return p
	}
	return os.Args[0]
}

// runChild is the child program, called by TestMain when the binary was
// started with childFlag; it returns the exit code. Acts:
//
//	exit N            exit with code N
//	cat               copy stdin to stdout
//	sleep D           sleep for the duration D, then exit 0
//	both N K CODE     K rounds of N bytes to stdout then N to stderr, exit CODE
//	outerr            print "out" to stdout and "err" to stderr
//	readline-hello    read a line from stdin, then print "hello"
//	env               print "$BLITZ_A:$BLITZ_PROC_INHERITED:" and the working directory
//	env-short         print "$BLITZ_A:$BLITZ_PROC_INHERITED"
//	dial-write A B D  dial TCP addresses A and B, sleep D, write a byte to
//	                  A, 20 ms later one to B, then exit
func runChild(args []string) int {
	if len(args) == 0 {
		fmt.Fprintln(os.Stderr, "child: no act")
		return 100
	}
	num := func(i int) int {
		n, err := strconv.Atoi(args[i])
		if err != nil {
			panic(err)
		}
		return n
	}
	switch args[0] {
	case "exit":
		return num(1)
	case "cat":
		if _, err := io.Copy(os.Stdout, os.Stdin); err != nil {
			return 101
		}
	case "sleep":
		d, err := time.ParseDuration(args[1])
		if err != nil {
			panic(err)
		}
		time.Sleep(d)
	case "both":
		chunk := make([]byte, num(1))
		for range num(2) {
			os.Stdout.Write(chunk)
			os.Stderr.Write(chunk)
		}
		return num(3)
	case "outerr":
		fmt.Println("out")
		fmt.Fprintln(os.Stderr, "err")
	case "readline-hello":
		if _, err := bufio.NewReader(os.Stdin).ReadString('\n'); err != nil {
			return 102
		}
		fmt.Print("hello")
	case "env", "env-short":
		fmt.Printf("%s:%s", os.Getenv("BLITZ_A"), os.Getenv("BLITZ_PROC_INHERITED"))
		if args[0] == "env" {
			wd, _ := os.Getwd()
			fmt.Printf(":%s\n", wd)
		}
	case "dial-write":
		return dialWrite(args[1], args[2], args[3])
	default:
		fmt.Fprintln(os.Stderr, "child: unknown act", strings.Join(args, " "))
		return 100
	}
	return 0
}

// dialWrite is the dial-write act.
func dialWrite(a, b, wait string) int {
	d, err := time.ParseDuration(wait)
	if err != nil {
		panic(err)
	}
	ca, err := net.Dial("tcp", a)
	if err != nil {
		fmt.Fprintln(os.Stderr, "child:", err)
		return 103
	}
	cb, err := net.Dial("tcp", b)
	if err != nil {
		fmt.Fprintln(os.Stderr, "child:", err)
		return 103
	}
	time.Sleep(d)
	if _, err := ca.Write([]byte("x")); err != nil {
		return 104
	}
	time.Sleep(20 * time.Millisecond)
	if _, err := cb.Write([]byte("x")); err != nil {
		return 104
	}
	ca.Close()
	cb.Close()
	return 0
}
