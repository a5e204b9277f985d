//go:build linux

package harness

import (
	"bufio"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// squatter names a process other than pid and its descendants that listens
// on addr's port ("" when every listener there is theirs, or none is left).
// A proxy told to listen on a port picked free a moment earlier can lose
// it to another process; if that one speaks HTTP, a readiness probe passes
// on its answer, and the scenario would talk to a stranger. known is false
// where the system cannot tell (no /proc).
func squatter(addr string, pid int) (who string, known bool) {
	_, p, err := net.SplitHostPort(addr)
	if err != nil {
		return "", false
	}
	port, err := strconv.Atoi(p)
	if err != nil {
		return "", false
	}
	inodes, ok := listeningInodes(port)
	if !ok {
		return "", false
	}
	if len(inodes) == 0 {
		return "", true
	}
	ours := map[string]bool{}
	for _, q := range descendants(pid) {
		for ino := range socketInodes(q) {
			ours[ino] = true
		}
	}
	for _, ino := range inodes {
		if ours[ino] {
			continue
		}
		// Only a listener whose owner this process can see is called a
		// squatter: one it may not look into (another user's, a container
		// runtime's port forwarder started for the command) proves nothing.
		owner, found := ownerOf(ino)
		if !found {
			return "", false
		}
		return fmt.Sprintf("another process (%s) listens on port %d, not pid %d or its children", owner, port, pid), true
	}
	return "", true
}

// listeningInodes are the socket inodes of the TCP listeners (IPv4 and IPv6)
// on port, from /proc/net/tcp{,6}; ok is false when neither can be read.
func listeningInodes(port int) (inodes []string, ok bool) {
	want := fmt.Sprintf(":%04X", port)
	for _, name := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		f, err := os.Open(name)
		if err != nil {
			continue
		}
		ok = true
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			// sl local_address rem_address st tx:rx tr:when retrnsmt uid timeout inode
			fs := strings.Fields(sc.Text())
			if len(fs) < 10 || fs[3] != "0A" || !strings.HasSuffix(fs[1], want) {
				continue
			}
			inodes = append(inodes, fs[9])
		}
		_ = f.Close()
	}
	return inodes, ok
}

// descendants are pid and every process below it, from /proc/*/stat.
func descendants(pid int) []int {
	children := map[int][]int{}
	dirs, _ := os.ReadDir("/proc")
	for _, d := range dirs {
		q, err := strconv.Atoi(d.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", d.Name(), "stat"))
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...: comm may hold spaces and parentheses.
		s := string(b)
		i := strings.LastIndexByte(s, ')')
		if i < 0 {
			continue
		}
		fs := strings.Fields(s[i+1:])
		if len(fs) < 2 {
			continue
		}
		if pp, err := strconv.Atoi(fs[1]); err == nil {
			children[pp] = append(children[pp], q)
		}
	}
	out := []int{pid}
	for i := 0; i < len(out); i++ {
		out = append(out, children[out[i]]...)
	}
	return out
}

// socketInodes are the inodes of the sockets process pid holds open.
func socketInodes(pid int) map[string]bool {
	dir := filepath.Join("/proc", strconv.Itoa(pid), "fd")
	fds, _ := os.ReadDir(dir)
	out := map[string]bool{}
	for _, fd := range fds {
		l, err := os.Readlink(filepath.Join(dir, fd.Name()))
		if ino, ok := strings.CutPrefix(l, "socket:["); err == nil && ok {
			out[strings.TrimSuffix(ino, "]")] = true
		}
	}
	return out
}

// ownerOf names the process holding socket inode ino, if this process may
// look into it.
func ownerOf(ino string) (string, bool) {
	dirs, _ := os.ReadDir("/proc")
	for _, d := range dirs {
		q, err := strconv.Atoi(d.Name())
		if err != nil {
			continue
		}
		if socketInodes(q)[ino] {
			comm, _ := os.ReadFile(filepath.Join("/proc", d.Name(), "comm"))
			return fmt.Sprintf("pid %d, %s", q, strings.TrimSpace(string(comm))), true
		}
	}
	return "", false
}
