package pcaps

// TestEmbeddedConsumerProtocol checks the consumer group protocol that
// kwire decodes inside JoinGroup and SyncGroup bytes fields against
// franz-go's kmsg reading of the same bytes, in the captures of two client
// libraries: the subscription's topics and user data, the assignment's
// topics and partitions, and that each embedded struct spans exactly the
// bytes of its field.

import (
	"bytes"
	"testing"

	"github.com/kwire/kwire/protocol"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func TestEmbeddedConsumerProtocol(t *testing.T) {
	for _, capture := range []string{"kgo-produce-consume.pcap", "sarama-produce-consume.pcap"} {
		t.Run(capture, func(t *testing.T) {
			conns, _, err := readConns(capture)
			if err != nil {
				t.Fatal(err)
			}
			ic := decodeIndependently(t, conns)
			subs, asgs := 0, 0
			for _, ex := range ic.exchanges {
				switch req := ex.req.(type) {
				case *kmsg.JoinGroupRequest:
					if req.ProtocolType != "consumer" {
						continue
					}
					tree := protocol.DecodeRequest(ex.reqFrame)
					_, _, body := protocol.FrameParts(tree.Root)
					protos := body.Child("Protocols")
					if protos == nil || len(protos.Children) != len(req.Protocols) {
						t.Fatalf("corr %d: Protocols %v, kmsg has %d", ex.corr, protos, len(req.Protocols))
					}
					for i, p := range req.Protocols {
						var md kmsg.ConsumerMemberMetadata
						if err := md.ReadFrom(p.Metadata); err != nil {
							t.Fatalf("corr %d: kmsg: %v", ex.corr, err)
						}
						n := protos.Children[i].Child("Metadata")
						checkEmbedded(t, n, "ConsumerProtocolSubscription", ex.reqFrame, p.Metadata)
						topics := n.Child("Topics")
						if topics == nil || len(topics.Children) != len(md.Topics) || len(md.Topics) == 0 {
							t.Fatalf("corr %d: Topics %v, kmsg %q", ex.corr, topics, md.Topics)
						}
						for j, tp := range md.Topics {
							if topics.Children[j].Str != tp {
								t.Errorf("corr %d: Topics[%d] %q, kmsg %q", ex.corr, j, topics.Children[j].Str, tp)
							}
						}
						if ud := n.Child("UserData"); !bytes.Equal(ud.Raw, md.UserData) {
							t.Errorf("corr %d: UserData %x, kmsg %x", ex.corr, ud.Raw, md.UserData)
						}
						subs++
					}
				case *kmsg.SyncGroupRequest:
					if ex.respFrame == nil {
						continue
					}
					resp, ok := ex.resp.(*kmsg.SyncGroupResponse)
					if !ok || len(resp.MemberAssignment) == 0 {
						continue
					}
					var a kmsg.ConsumerMemberAssignment
					if err := a.ReadFrom(resp.MemberAssignment); err != nil {
						t.Fatalf("corr %d: kmsg: %v", ex.corr, err)
					}
					tree := protocol.DecodeResponse(ex.respFrame, ex.key, ex.version)
					_, _, body := protocol.FrameParts(tree.Root)
					n := body.Child("Assignment")
					checkEmbedded(t, n, "ConsumerProtocolAssignment", ex.respFrame, resp.MemberAssignment)
					ap := n.Child("AssignedPartitions")
					if ap == nil || len(ap.Children) != len(a.Topics) {
						t.Fatalf("corr %d: AssignedPartitions %v, kmsg %d topics", ex.corr, ap, len(a.Topics))
					}
					for j, tp := range a.Topics {
						e := ap.Children[j]
						if e.Child("Topic").Str != tp.Topic {
							t.Errorf("corr %d: topic %q, kmsg %q", ex.corr, e.Child("Topic").Str, tp.Topic)
						}
						ps := e.Child("Partitions").Children
						if len(ps) != len(tp.Partitions) {
							t.Fatalf("corr %d: %d partitions, kmsg %v", ex.corr, len(ps), tp.Partitions)
						}
						for k, p := range tp.Partitions {
							if ps[k].Int != int64(p) {
								t.Errorf("corr %d: partition %d, kmsg %d", ex.corr, ps[k].Int, p)
							}
						}
					}
					asgs++
				}
			}
			if subs == 0 || asgs == 0 {
				t.Errorf("%d consumer subscriptions and %d assignments checked; the capture should have both", subs, asgs)
			}
		})
	}
}

// checkEmbedded checks that n is the bytes field raw of frame decoded as
// the struct name: its Version child starts the bytes and its last child
// ends them.
func checkEmbedded(t *testing.T, n *protocol.Node, name string, frame, raw []byte) {
	t.Helper()
	if n == nil || n.Kind != protocol.KindBytes || n.Type != name || !bytes.Equal(n.Raw, raw) || len(n.Children) < 2 {
		t.Fatalf("not a decoded %s: %+v", name, n)
	}
	start := n.End() - len(raw)
	if !bytes.Equal(frame[start:n.End()], raw) {
		t.Fatalf("%s: span [%d,%d) does not hold its bytes", name, start, n.End())
	}
	first, last := n.Children[0], n.Children[len(n.Children)-1]
	if first.Name != "Version" || first.Off != start || last.End() != n.End() {
		t.Errorf("%s: children span [%d,%d), bytes [%d,%d)", name, first.Off, last.End(), start, n.End())
	}
}
