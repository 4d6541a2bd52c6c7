import FoundationEssentials
import Platform

/// First messages that a start claimed for this replica in its own transaction and hands straight
/// to a delivery worker, which then sends without a claiming transaction of its own. A message
/// here is `sending` under this replica in the database, like any claimed one: if the process
/// dies before it is sent, the next start puts it back in the queue (same code, same key).
/// A place is held from the start until the send is over, one place per delivery worker: a message
/// waits here only while a worker ends a queued message's call, far inside the claim lease. When
/// every place is taken, a start queues its message as before.
///
/// It also keeps the promise of a look at the database queue (a message queued there, a retry
/// falling due): a worker busy with handed-off messages goes on until that look has happened,
/// so the messages it took never stand in for it. Thread-safe.
final class DeliveryHandOff: @unchecked Sendable {
    struct Item {
        let delivery: QueuedDelivery
        let request: StoredRequest
    }

    private let capacity: Int
    private let lock = Lock()
    // Guarded by `lock`.
    private var items: [Item] = []
    /// Places taken: reserved by a start, holding a message, or its send under way.
    private var placesTaken = 0
    private var queueLookWanted = false

    /// `capacity` 0: nothing is handed off; every message goes through the queue.
    init(capacity: Int) {
        precondition(capacity >= 0)
        self.capacity = capacity
    }

    /// Takes a place for one message, before its start writes anything; false when every place
    /// is taken (the start then queues the message).
    func reserve() -> Bool {
        lock.lock()
        defer { lock.unlock() }
        guard placesTaken < capacity else { return false }
        placesTaken += 1
        return true
    }

    /// Gives back a place: its start was refused or failed, or its message's send is over.
    func release() {
        lock.lock()
        precondition(placesTaken > items.count, "a hand-off place released twice")
        placesTaken -= 1
        lock.unlock()
    }

    /// Fills a reserved place with the message its start just committed as claimed.
    func push(_ item: Item) {
        precondition(item.delivery.state == .sending && item.delivery.attempts == 1)
        lock.lock()
        precondition(placesTaken > items.count, "a hand-off without a reserved place")
        items.append(item)
        lock.unlock()
    }

    /// The oldest handed-off message, if any; its place is given back (`release`) once it was sent.
    func take() -> Item? {
        lock.lock()
        defer { lock.unlock() }
        return items.isEmpty ? nil : items.removeFirst()
    }

    /// Something may be due in the database queue: some worker must look there.
    func wantQueueLook() {
        lock.lock()
        queueLookWanted = true
        lock.unlock()
    }

    /// A worker is looking at the database queue now; what is queued after this wants another look.
    func queueLookStarted() {
        lock.lock()
        queueLookWanted = false
        lock.unlock()
    }

    /// A handed-off message is waiting.
    var hasItems: Bool {
        lock.lock()
        defer { lock.unlock() }
        return !items.isEmpty
    }

    /// Work a worker must not leave behind: a handed-off message, or a look promised to the queue.
    var hasWork: Bool {
        lock.lock()
        defer { lock.unlock() }
        return !items.isEmpty || queueLookWanted
    }
}
