package urlfrontier

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/trawler-crawl/trawler/pkg/frontier"
	"github.com/trawler-crawl/trawler/pkg/hostkey"
	pb "github.com/trawler-crawl/trawler/pkg/urlfrontier/urlfrontierpb"
)

// maxDate is the last refetchable date taken (9999-12-31): a larger one is
// a client's mistake, such as -1 sent as an unsigned number.
const maxDate = 253402300799

// badItems collects the items of a stream that were refused, so that the
// stream goes on and its final status names them all.
type badItems struct {
	n       int
	code    codes.Code
	reasons []string
}

// maxReasons bounds the reasons the final status spells out.
const maxReasons = 20

func (b *badItems) add(pos int, id string, err error) {
	b.n++
	code := status.Code(err)
	if b.code != codes.InvalidArgument {
		b.code = code // InvalidArgument wins over Unimplemented
	}
	if len(b.reasons) < maxReasons {
		b.reasons = append(b.reasons, fmt.Sprintf("item %d (ID %q): %s", pos, id, status.Convert(err).Message()))
	}
}

// err is the stream's final status: nil when every item was taken.
func (b *badItems) err() error {
	if b.n == 0 {
		return nil
	}
	more := ""
	if b.n > len(b.reasons) {
		more = fmt.Sprintf("; and %d more", b.n-len(b.reasons))
	}
	return status.Errorf(b.code, "%d items refused (acked SKIPPED, the others were taken): %s%s", b.n, strings.Join(b.reasons, "; "), more)
}

// checkInfo validates a URLInfo and returns its queue (host key).
func checkInfo(info *pb.URLInfo) (string, error) {
	if info == nil {
		return "", status.Error(codes.InvalidArgument, "no URLInfo")
	}
	if strings.TrimSpace(info.GetUrl()) == "" {
		return "", status.Error(codes.InvalidArgument, "empty URL")
	}
	if _, err := crawlID(info.GetCrawlID()); err != nil {
		return "", err
	}
	u := info.GetUrl()
	if !strings.HasPrefix(strings.ToLower(u), "http://") && !strings.HasPrefix(strings.ToLower(u), "https://") {
		return "", status.Errorf(codes.InvalidArgument, "URL %q: want an absolute http or https URL", u)
	}
	host, err := hostkey.Authority(u)
	if err != nil {
		return "", status.Errorf(codes.InvalidArgument, "URL %q: %v", u, err)
	}
	if k := info.GetKey(); k != "" && k != host {
		return "", status.Errorf(codes.Unimplemented,
			"queue key %q: Trawler queues a URL by its host key (%q here) and takes no other", k, host)
	}
	return host, nil
}

// PutURLs takes discovered URLs (queued unless known) and known ones
// (their lease completed; a refetchable date schedules them again). Every
// item is acked; a refused one is acked SKIPPED and named in the stream's
// final status (InvalidArgument, or Unimplemented for a queue key
// Trawler cannot honour), so nothing else in the stream is lost.
func (s *Server) PutURLs(stream pb.URLFrontier_PutURLsServer) error {
	ctx := stream.Context()
	var bad badItems
	for pos := 0; ; pos++ {
		item, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			return bad.err()
		}
		if err != nil {
			return err
		}
		id := item.GetID()
		ack := &pb.AckMessage{ID: id, Status: pb.AckMessage_OK}
		st, err := s.putOne(ctx, item)
		switch {
		case err != nil && status.Code(err) == codes.Unavailable:
			ack.Status = pb.AckMessage_FAIL
			s.log.Warn("urlfrontier put failed", "pos", pos, "err", err)
		case err != nil:
			ack.Status = pb.AckMessage_SKIPPED
			bad.add(pos, id, err)
			s.m.refuse(err)
		default:
			ack.Status = st
		}
		if ack.ID == "" {
			ack.ID = urlOf(item)
		}
		s.m.putStatus(strings.ToLower(ack.Status.String()), 1)
		if err := stream.Send(ack); err != nil {
			return err
		}
	}
}

func urlOf(item *pb.URLItem) string {
	if d := item.GetDiscovered(); d != nil {
		return d.GetInfo().GetUrl()
	}
	return item.GetKnown().GetInfo().GetUrl()
}

// putOne takes one item; it returns the ack status, or an error with a
// gRPC code (Unavailable: try again).
func (s *Server) putOne(ctx context.Context, item *pb.URLItem) (pb.AckMessage_Status, error) {
	switch {
	case item.GetDiscovered() != nil:
		info := item.GetDiscovered().GetInfo()
		if _, err := checkInfo(info); err != nil {
			return 0, err
		}
		c, err := s.crawl(ctx, info.GetCrawlID(), true)
		if err != nil {
			return 0, err
		}
		sts, err := c.discover(ctx, []*pb.URLInfo{info})
		if err != nil {
			return 0, err
		}
		return sts[0], nil
	case item.GetKnown() != nil:
		k := item.GetKnown()
		if _, err := checkInfo(k.GetInfo()); err != nil {
			return 0, err
		}
		if k.GetRefetchableFromDate() > maxDate {
			return 0, status.Errorf(codes.InvalidArgument, "refetchable_from_date %d: past year 9999 (a negative number sent unsigned?)", k.GetRefetchableFromDate())
		}
		c, err := s.crawl(ctx, k.GetInfo().GetCrawlID(), true)
		if err != nil {
			return 0, err
		}
		return pb.AckMessage_OK, c.known(ctx, k)
	}
	return 0, status.Error(codes.InvalidArgument, "item is neither discovered nor known")
}

// discover admits checked URLInfos: OK for a URL queued now, SKIPPED for
// one already known (queued, in flight, finished or scheduled).
func (c *crawl) discover(ctx context.Context, infos []*pb.URLInfo) ([]pb.AckMessage_Status, error) {
	cands := make([]frontier.Candidate, len(infos))
	for i, info := range infos {
		l, err := launch(info, false)
		if err != nil {
			return nil, status.Errorf(codes.InvalidArgument, "URL %q: %v", info.GetUrl(), err)
		}
		cands[i] = frontier.Candidate{Launch: l, Policy: c.policy(0)}
	}
	res, err := c.f.Admit(ctx, cands)
	if err != nil {
		return nil, unavailable("admit", err)
	}
	out := make([]pb.AckMessage_Status, len(res))
	for i, r := range res {
		out[i] = pb.AckMessage_SKIPPED
		if r.Verdict == frontier.Admitted {
			out[i] = pb.AckMessage_OK
		}
	}
	return out, nil
}

// known settles a known URL: the lease it was served under (or, never
// served, its place in the queue) is completed; without a date it is done
// for good, with one it is scheduled to be queued again then.
func (c *crawl) known(ctx context.Context, k *pb.KnownURLItem) error {
	url := k.GetInfo().GetUrl()
	// Twice at most: a lease reaped between LeaseOf and Complete put the
	// URL back in its queue, where TakeURL finds it.
	err := errLeaseLost
	for try := 0; try < 2 && errors.Is(err, errLeaseLost); try++ {
		err = c.settle(ctx, url)
	}
	if err != nil {
		return unavailable("known URL", err)
	}
	if d := k.GetRefetchableFromDate(); d > 0 {
		err = c.schedule(ctx, k.GetInfo(), time.Unix(int64(d), 0))
	} else {
		err = c.s.rdb.ZRem(ctx, c.key("due"), url).Err()
	}
	if err != nil {
		return unavailable("schedule", err)
	}
	return nil
}

// settle completes url's lease, or takes it from its queue and completes
// it; a URL the crawl never had is recorded finished, so that a discovery
// does not queue it.
func (c *crawl) settle(ctx context.Context, url string) error {
	cl, err := c.f.LeaseOf(ctx, url)
	if err == nil && cl == nil {
		cl, err = c.f.TakeURL(ctx, url, time.Minute)
	}
	if err != nil {
		return err
	}
	if cl != nil {
		return c.complete(ctx, cl)
	}
	_, _, err = c.f.MarkFinished(ctx, []frontier.Finished{{URL: url, Status: 200, At: c.now()}})
	return err
}

// PutDiscovered admits batches of discovered URLs, one script call per
// batch and crawl, and acks each batch with a status per URL. Refused
// URLs are SKIPPED and named in the final status, as in PutURLs.
func (s *Server) PutDiscovered(stream pb.URLFrontier_PutDiscoveredServer) error {
	ctx := stream.Context()
	var bad badItems
	pos := 0
	for {
		batch, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			return bad.err()
		}
		if err != nil {
			return err
		}
		ack := &pb.BatchAck{ID: batch.GetID(), Statuses: make([]pb.AckMessage_Status, len(batch.GetItems()))}
		byCrawl := map[string][]int{}
		var order []string
		for i, info := range batch.GetItems() {
			ack.Statuses[i] = pb.AckMessage_SKIPPED
			if _, err := checkInfo(info); err != nil {
				bad.add(pos+i, batch.GetID(), err)
				s.m.refuse(err)
				continue
			}
			id, _ := crawlID(info.GetCrawlID())
			if _, ok := byCrawl[id]; !ok {
				order = append(order, id)
			}
			byCrawl[id] = append(byCrawl[id], i)
		}
		for _, id := range order {
			s.discoverBatch(ctx, id, batch.GetItems(), byCrawl[id], ack.Statuses)
		}
		pos += len(batch.GetItems())
		for _, st := range ack.Statuses {
			s.m.putStatus(strings.ToLower(st.String()), 1)
		}
		if err := stream.Send(ack); err != nil {
			return err
		}
	}
}

// discoverBatch admits the items at idx of one crawl into sts; a failure
// marks them FAIL (send again).
func (s *Server) discoverBatch(ctx context.Context, id string, items []*pb.URLInfo, idx []int, sts []pb.AckMessage_Status) {
	infos := make([]*pb.URLInfo, len(idx))
	for j, i := range idx {
		infos[j] = items[i]
	}
	c, err := s.crawl(ctx, id, true)
	var res []pb.AckMessage_Status
	if err == nil {
		res, err = c.discover(ctx, infos)
	}
	for j, i := range idx {
		if err != nil {
			sts[i] = pb.AckMessage_FAIL
			continue
		}
		sts[i] = res[j]
	}
	if err != nil {
		s.log.Warn("urlfrontier put discovered failed", "crawl", id, "err", err)
	}
}
