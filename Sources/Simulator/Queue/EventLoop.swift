/// The deterministic scheduler: a clock that starts at zero and an ``EventQueue``.
///
/// The loop performs no work itself. Its owner asks for the next event with ``next()``, which
/// sets ``now`` to that event's time (time never goes backwards), handles it, and schedules more.
/// Events at one instant come out in the order they were scheduled, so a batch of same-instant
/// events always runs in the same order.
///
///     enum Ping { case ping(Int) }
///     var loop = EventLoop<Ping>()
///     loop.schedule(.ping(0), after: .milliseconds(5))
///     while let (time, event) = loop.next(until: VirtualTime.zero + .seconds(1)) {
///       // handle `event` at `time`, maybe schedule more
///     }
///
/// Leftover work is never silently dropped: ``pendingCount`` and ``drain()`` report it.
@_spi(Kernel) public struct EventLoop<Event> {
  /// The current simulated time: the time of the event being handled.
  @inlinable public var now: VirtualTime { _now }
  /// How many events have been handed out by ``next()``.
  @inlinable public var processedCount: Int { _processedCount }
  @usableFromInline var _now: VirtualTime = .zero
  @usableFromInline var _processedCount: Int = 0
  @usableFromInline var _queue: EventQueue<Event>

  /// A loop at time zero with no events; `minimumCapacity` reserves room in the queue.
  @inlinable
  public init(minimumCapacity: Int = 0) {
    _queue = EventQueue(minimumCapacity: minimumCapacity)
  }

  /// Events scheduled and not yet handed out.
  @inlinable public var pendingCount: Int { _queue.count }
  /// The time of the next event, if any.
  @inlinable public var nextTime: VirtualTime? { _queue.min?.time }

  /// Schedules `event` at `time`.
  /// - Precondition: `time >= now` (scheduling into the past is a bug in the caller).
  @inlinable
  public mutating func schedule(_ event: Event, at time: VirtualTime) {
    precondition(time >= now, "EventLoop: event scheduled at \(time), before now (\(now))")
    _queue.insert(event, at: time)
  }

  /// Schedules `event` after `delay` (negative delays are a bug in the caller).
  @inlinable
  public mutating func schedule(_ event: Event, after delay: SimDuration) {
    schedule(event, at: now + delay)
  }

  /// Removes the next event and advances ``now`` to its time; `nil` when nothing is left.
  @inlinable
  public mutating func next() -> (time: VirtualTime, event: Event)? {
    guard let entry = _queue.popMin() else { return nil }
    _now = entry.time
    _processedCount &+= 1
    return (entry.time, entry.event)
  }

  /// Like ``next()``, but leaves events later than `limit` in the queue. When nothing is due by
  /// `limit`, ``now`` advances to `limit` (if that is later), and `nil` is returned.
  @inlinable
  public mutating func next(until limit: VirtualTime) -> (time: VirtualTime, event: Event)? {
    if let t = _queue.min?.time, t <= limit { return next() }
    if limit > _now { _now = limit }
    return nil
  }

  /// Advances ``now`` to `time` without handling anything.
  /// - Precondition: no event is due before `time`, and `time >= now`.
  public mutating func advance(to time: VirtualTime) {
    precondition(time >= now, "EventLoop: time cannot go backwards")
    if let t = _queue.min?.time { precondition(t >= time, "EventLoop: advancing past a pending event") }
    _now = time
  }

  /// Removes and returns every pending event, earliest first: work left at the end of a run.
  public mutating func drain() -> [EventQueue<Event>.Entry] { _queue.removeAll() }
}

extension EventLoop: Sendable where Event: Sendable {}
