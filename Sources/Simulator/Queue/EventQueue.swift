/// A priority queue of events ordered by `(time, sequence)`: earliest first, and events at the
/// same instant in the order they were inserted. A hand-written binary min-heap, fully
/// `@inlinable` so that it specialises for the event type of the module that uses it.
///
///     var q = EventQueue<String>()
///     q.insert("b", at: VirtualTime(nanoseconds: 5))
///     q.insert("a", at: VirtualTime(nanoseconds: 5))
///     q.popMin()?.event   // "b" — same instant, inserted first
///
/// The sequence number is assigned by the queue on insertion, so ordering never depends on the
/// payload, on hashing or on memory addresses.
///
/// - Complexity: `insert` and `popMin` are O(log *n*); `min` is O(1).
@_spi(Kernel) public struct EventQueue<Event> {
  /// One queued event with its due time and the sequence number that orders it among events at
  /// the same instant.
  public struct Entry {
    /// When the event is due.
    public let time: VirtualTime
    /// The event's insertion number: of two events at one instant, the lower leaves first.
    public let sequence: UInt64
    /// The event itself, as inserted.
    public let event: Event

    @inlinable
    init(time: VirtualTime, sequence: UInt64, event: Event) {
      self.time = time
      self.sequence = sequence
      self.event = event
    }

    @inlinable @inline(__always)
    func _precedes(_ other: Entry) -> Bool {
      time.nanoseconds < other.time.nanoseconds
        || (time.nanoseconds == other.time.nanoseconds && sequence < other.sequence)
    }
  }

  @usableFromInline var _storage: [Entry] = []
  @usableFromInline var _nextSequence: UInt64 = 0

  /// An empty queue.
  @inlinable
  public init() {}

  /// An empty queue with room for `minimumCapacity` events.
  @inlinable
  public init(minimumCapacity: Int) { _storage.reserveCapacity(minimumCapacity) }

  /// The number of events waiting.
  @inlinable public var count: Int { _storage.count }
  /// Whether no event is waiting.
  @inlinable public var isEmpty: Bool { _storage.isEmpty }
  /// The next event to leave, without removing it.
  @inlinable public var min: Entry? { _storage.first }
  /// How many events have ever been inserted (the next sequence number).
  @inlinable public var insertedCount: UInt64 { _nextSequence }

  /// Adds an event; returns the sequence number it was given.
  @inlinable
  @discardableResult
  public mutating func insert(_ event: Event, at time: VirtualTime) -> UInt64 {
    let sequence = _nextSequence
    _nextSequence &+= 1
    _storage.append(Entry(time: time, sequence: sequence, event: event))
    _siftUp(_storage.count - 1)
    #if DEBUG
      _checkInvariantsIfSmall()
    #endif
    return sequence
  }

  /// Removes and returns the earliest event.
  @inlinable
  public mutating func popMin() -> Entry? {
    // The last entry leaves the array and sinks from the root's place, which the earliest
    // entry leaves: no swap, and the root read once.
    guard let last = _storage.popLast() else { return nil }
    if _storage.isEmpty { return last }
    let result = _storage.withUnsafeMutableBufferPointer { heap in
      let root = heap[0]
      Self._sink(last, from: 0, in: heap)
      return root
    }
    #if DEBUG
      _checkInvariantsIfSmall()
    #endif
    return result
  }

  /// Removes every event, returning them in the order they would have left.
  public mutating func removeAll() -> [Entry] {
    var result: [Entry] = []
    result.reserveCapacity(count)
    while let e = popMin() { result.append(e) }
    return result
  }

  @inlinable
  mutating func _siftUp(_ index: Int) {
    _storage.withUnsafeMutableBufferPointer { heap in
      var child = index
      let moving = heap[child]
      while child > 0 {
        let parent = (child - 1) >> 1
        if !moving._precedes(heap[parent]) { break }
        heap[child] = heap[parent]
        child = parent
      }
      heap[child] = moving
    }
  }

  /// Puts `moving` in the hole at `index`, or below it. The hole first descends to a leaf along
  /// the earlier child (one comparison a level: `moving`, taken from the end, mostly belongs
  /// near the bottom), then `moving` climbs from there while it precedes the hole's parent.
  @inlinable @inline(__always)
  static func _sink(_ moving: Entry, from index: Int, in heap: UnsafeMutableBufferPointer<Entry>) {
    let n = heap.count
    var hole = index
    while true {
      let left = 2 &* hole &+ 1
      if left >= n { break }
      let right = left &+ 1
      let best = right < n && heap[right]._precedes(heap[left]) ? right : left
      heap[hole] = heap[best]
      hole = best
    }
    while hole > index {
      let parent = (hole &- 1) >> 1
      if !moving._precedes(heap[parent]) { break }
      heap[hole] = heap[parent]
      hole = parent
    }
    heap[hole] = moving
  }
}

extension EventQueue: Sendable where Event: Sendable {}
extension EventQueue.Entry: Sendable where Event: Sendable {}
