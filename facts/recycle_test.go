package facts

import (
	"reflect"
	"testing"

	"github.com/kwire/kwire/internal/poison"
	"github.com/kwire/kwire/protocol"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestRecycle: the facts built into a recycled Exchange are those of a
// new one, whatever the recycled one held (a Metadata exchange's, reused
// by a group one and back), what a recycled Exchange held (its topics)
// stays as it was, and Of costs one allocation fewer with Recycle.
func TestRecycle(t *testing.T) {
	if poison.Released {
		t.Skip("kwirepoison: released memory is poisoned, never reused")
	}
	sg := kmsg.NewPtrSyncGroupRequest()
	sg.Version, sg.Group, sg.Generation, sg.MemberID = 5, "g", 3, "a"
	sg.ProtocolType, sg.Protocol = kmsg.StringPtr("consumer"), kmsg.StringPtr("range")
	md := kmsg.NewPtrMetadataRequest()
	md.Version = 12
	md.Topics = []kmsg.MetadataRequestTopic{{Topic: kmsg.StringPtr("orders")}}
	sgReq, mdReq := request(t, sg), request(t, md)
	fresh := func(key, ver int16, tr *protocol.Tree) Exchange {
		fx := *Of(key, ver, tr, nil) // a copy: the Exchange itself may be reused
		return fx
	}
	wantSG, wantMD := fresh(14, 5, sgReq), fresh(3, 12, mdReq)
	if len(wantMD.Topics) != 1 || wantMD.Topics[0].Name != "orders" || wantSG.Group.ID != "g" {
		t.Fatalf("facts: Metadata %+v, SyncGroup %+v", wantMD, wantSG)
	}
	for range 3 {
		fx := Of(3, 12, mdReq, nil)
		if !reflect.DeepEqual(*fx, wantMD) {
			t.Fatalf("Metadata facts in a recycled Exchange:\n%+v\nwant\n%+v", *fx, wantMD)
		}
		topics := fx.Topics
		Recycle(fx)
		fx = Of(14, 5, sgReq, nil)
		if !reflect.DeepEqual(*fx, wantSG) {
			t.Fatalf("SyncGroup facts in a recycled Exchange:\n%+v\nwant\n%+v", *fx, wantSG)
		}
		if !reflect.DeepEqual(topics, wantMD.Topics) {
			t.Fatalf("what a recycled Exchange held changed: %+v", topics)
		}
		Recycle(fx)
	}
	kept := testing.AllocsPerRun(100, func() { Of(3, 12, mdReq, nil) })
	recycled := testing.AllocsPerRun(100, func() { Recycle(Of(3, 12, mdReq, nil)) })
	if recycled > kept-1 {
		t.Errorf("%v allocations a Metadata request's facts recycled, %v kept: want one fewer", recycled, kept)
	}
}

// TestRecyclePoisons: with released memory poisoned, a recycled
// Exchange names the topic RELEASED and is not reused.
func TestRecyclePoisons(t *testing.T) {
	defer func(was bool) { poison.Released = was }(poison.Released)
	poison.Released = true
	md := kmsg.NewPtrMetadataRequest()
	md.Version = 12
	tr := request(t, md)
	fx := Of(3, 12, tr, nil)
	Recycle(fx)
	if fx.Key != -0x5a5a || len(fx.Topics) != 1 || fx.Topics[0].Name != poison.Marker {
		t.Fatalf("recycled facts %+v", fx)
	}
	for range 10 {
		if Of(3, 12, tr, nil) == fx {
			t.Fatal("poisoned facts were reused")
		}
	}
}
