package redisstore

// WaitScans waits for the store's first subscription and for every scan
// of the open keys started so far (the subscription's and each
// listener's): a key written after it is one the store has not heard of.
func (s *Store) WaitScans() {
	<-s.subscribed
	s.scans.Wait()
}
