package harness

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// The shipped HAProxy config is valid as HAProxy reads it, with one replica
// and with the most it declares. What it does is held by the cluster
// scenarios, which run it.
func TestTheShippedHAProxyConfigIsValid(t *testing.T) {
	cfg, err := ShippedHAProxyConfig()
	if err != nil {
		t.Fatal(err)
	}
	bin, err := (&Cluster{}).haproxyPath()
	if err != nil {
		t.Fatal(err)
	}
	// A foreign proxy's cluster checks another path, or only that the port
	// accepts a connection.
	for _, check := range [][]string{nil, {"MCPLOCAL_LB_CHECK_PATH=/healthz"}, {"MCPLOCAL_LB_CHECK_TCP=1"}} {
		for _, n := range []int{1, clusterMaxReplicas} {
			env := append(os.Environ(), "MCPLOCAL_LB_BIND=127.0.0.1:1", "MCPLOCAL_LB_STATS=127.0.0.1:2")
			env = append(env, check...)
			for i := 1; i <= n; i++ {
				env = append(env, "MCPLOCAL_REPLICA_"+string(rune('0'+i))+"=127.0.0.1:1"+string(rune('0'+i)))
			}
			cmd := exec.Command(bin, "-c", "-f", cfg)
			cmd.Env = env
			out, err := cmd.CombinedOutput()
			if err != nil || !strings.Contains(string(out), "Configuration file is valid") {
				t.Fatalf("%d replicas, %v: haproxy -c: %v\n%s", n, check, err, out)
			}
		}
	}
}
