import Simulator

/// What a user does on a device, with names already resolved to indices.
public enum UserIntent: Hashable, Sendable {
  case create(type: Int32, key: RecordKey, values: [FieldWrite])
  case set(key: RecordKey, values: [FieldWrite])
  case append(key: RecordKey, field: Int32, text: String)
  case replace(key: RecordKey, field: Int32, old: String, new: String)
  case delete(key: RecordKey)

  public var key: RecordKey {
    switch self {
    case .create(_, let k, _), .set(let k, _), .append(let k, _, _), .replace(let k, _, _, _), .delete(let k): k
    }
  }
}

/// Device timers. Each kind has a generation; a timer from an older generation is ignored.
public enum TimerKind: Int, Hashable, Sendable, CaseIterable {
  case autosync, retry, timeout, apply, budget
}

/// Where the app is in its lifecycle.
public enum Lifecycle: Hashable, Sendable {
  case foreground
  /// A background window; work stops at the deadline.
  case background(deadline: VirtualTime)
  /// Background budget used up: nothing runs until the app is foregrounded.
  case suspended
  /// Killed: memory lost, local store kept; relaunched by the next sync, intent or foreground.
  case killed
}

/// Inputs a device reacts to (besides user intents).
public enum DeviceInput: Hashable, Sendable {
  /// `DEVICE sync`: foreground the app and sync now.
  case syncNow
  case background(budget: SimDuration)
  case kill
  /// Network reachability changed (airplane mode off/on, settle).
  case connectivity(Bool)
  case clockJump(SimDuration)
  case message(Message)
  case timer(TimerKind, generation: UInt32)
}

/// What the device observed about itself that the oracle and the trace need: never read by
/// policies, never used to decide anything.
public enum DeviceFact: Hashable, Sendable {
  /// `outbox=memory`: pending changes lost when the app was killed.
  case outboxLost([RecordKey])
  /// `unit=mark-first`: a batch cleared at send whose request was then cut off or lost.
  case batchAbandoned([RecordKey], cause: String)
  /// The server rejected the record's type for good.
  case rejected(RecordKey, typeName: String)
  /// A record that had vanished here became visible again; `afterDeletes` are the delete
  /// intents of it this device had applied by then (made, or taken in with a deleted copy).
  case reappeared(RecordKey, afterDeletes: [IntentID])
  /// Fetched changes dropped before they were applied (kill or suspension mid-apply).
  case fetchDropped(count: Int, cause: String)
}

/// What a device asks the world to do.
public enum DeviceEffect: Sendable {
  case send(Message)
  case timer(TimerKind, after: SimDuration, generation: UInt32)
  case fact(DeviceFact)
  /// What the user sees of a record changed: it became visible, or stopped being visible.
  case shown(RecordKey, visible: Bool)
  /// The device took in a copy of a record — applied it, or merged it under its own pending
  /// edits — and so received every intent it carries (only with ``DeviceConfig/reportsCopies``).
  case took(RecordState)
}

/// What a device's handlers read besides the device's own state: the time, and the policy with
/// its schema. One value per world, its time set before each input.
public struct DeviceEnvironment: Sendable {
  public var now: VirtualTime
  public let policy: any SyncPolicy
  /// `policy.settings`, read once.
  public let settings: PolicySettings
  public let context: MergeContext

  public init(now: VirtualTime = .zero, policy: any SyncPolicy, context: MergeContext) {
    self.now = now
    self.policy = policy
    self.settings = policy.settings
    self.context = context
  }
}

/// Fixed per-device settings.
public struct DeviceConfig: Hashable, Sendable {
  public var index: Int32
  public var name: String
  /// Position of the name in sorted order (ties in clock/HLC comparisons).
  public var rank: Int32
  public var deviceCount: Int
  /// Debounce after a local change; nil = no autosync.
  public var autosync: SimDuration?
  /// How long a request may go unanswered before it is retried.
  public var requestTimeout: SimDuration = .seconds(5)
  /// First retry delay; doubles up to `maxBackoff`.
  public var backoff: SimDuration = .seconds(1)
  public var maxBackoff: SimDuration = .seconds(60)
  /// Time to commit a fetched page (plus 0.5 ms a record): the window in which a kill separates
  /// saving the token from applying the records.
  public var applyDelay: SimDuration = .milliseconds(20)
  /// Keep a device-wide version vector and stamp it on every write (policy metadata that
  /// `conflict=update-wins` needs to tell a write the deleter had seen, even transitively,
  /// from one it had not): on when the policy's `tracksVersions` says so.
  public var causalMetadata = false
  /// Report every record copy the device takes in (``DeviceEffect/took(_:)``): the oracle's
  /// causal contexts are built from them. Off for runs that will not be judged.
  public var reportsCopies = true

  public init(index: Int32, name: String, rank: Int32, deviceCount: Int, autosync: SimDuration?) {
    self.index = index
    self.name = name
    self.rank = rank
    self.deviceCount = deviceCount
    self.autosync = autosync
  }
}
