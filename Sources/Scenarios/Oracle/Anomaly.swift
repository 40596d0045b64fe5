import Replica
@_spi(Kernel) import Simulator

/// The kinds of anomaly the oracle reports (`oracle.md`), in report order.
public enum AnomalyKind: String, CaseIterable, Hashable, Sendable, Comparable {
  case lostEdit = "lost-edit"
  case staleOverwrite = "stale-overwrite"
  case resurrection
  case droppedEvent = "dropped-event"
  case duplicateEvent = "duplicate-event"
  case strandedRecord = "stranded-record"
  case divergence
  case phantomValue = "phantom-value"
  case concurrentOverwrite = "concurrent-overwrite"
  case deleteUpdateConflict = "delete-update-conflict"

  /// Violations fail `expect no violations`; the last two kinds are informational.
  public var isViolation: Bool { self != .concurrentOverwrite && self != .deleteUpdateConflict }

  /// Position in report order.
  public var ordinal: Int {
    switch self {
    case .lostEdit: 0
    case .staleOverwrite: 1
    case .resurrection: 2
    case .droppedEvent: 3
    case .duplicateEvent: 4
    case .strandedRecord: 5
    case .divergence: 6
    case .phantomValue: 7
    case .concurrentOverwrite: 8
    case .deleteUpdateConflict: 9
    }
  }

  public static func < (a: AnomalyKind, b: AnomalyKind) -> Bool { a.ordinal < b.ordinal }
}

/// A record, by key, with its name in the scenario.
public struct RecordRef: Hashable, Sendable, CustomStringConvertible {
  public var key: RecordKey
  public var name: String
  public init(key: RecordKey, name: String) {
    self.key = key
    self.name = name
  }
  public var description: String { name }
}

/// A field of a record's type, by index, with its name.
public struct FieldRef: Hashable, Sendable, CustomStringConvertible {
  public var index: Int
  public var name: String
  public init(index: Int, name: String) {
    self.index = index
    self.name = name
  }
  public var description: String { name }
}

/// An intent, by id (`i7`).
public struct IntentRef: Hashable, Sendable, CustomStringConvertible {
  public var id: IntentID
  public init(_ id: IntentID) { self.id = id }
  public var description: String { Vocabulary.intent(id) }
}

/// A device, by index, with its name.
public struct DeviceRef: Hashable, Sendable, CustomStringConvertible {
  public var index: Int32
  public var name: String
  public init(index: Int32, name: String) {
    self.index = index
    self.name = name
  }
  public var description: String { name }
}

/// One thing the design lost (or, for informational kinds, decided).
public struct Anomaly: Hashable, Sendable {
  public var kind: AnomalyKind
  public var record: RecordRef?
  public var field: FieldRef?
  /// The intents involved; the losing one first.
  public var intents: [IntentRef]
  public var devices: [DeviceRef]
  /// True time of the losing intent (or of the observation).
  public var at: VirtualTime?
  /// One sentence a developer understands without the trace.
  public var explanation: String

  public init(
    kind: AnomalyKind, record: RecordRef?, field: FieldRef? = nil, intents: [IntentRef] = [], devices: [DeviceRef] = [],
    at: VirtualTime? = nil, explanation: String
  ) {
    self.kind = kind
    self.record = record
    self.field = field
    self.intents = intents
    self.devices = devices
    self.at = at
    self.explanation = explanation
  }

  /// `n1.body`, `n1`, or "" for a run-wide anomaly.
  public var place: String { [record?.name, field?.name].compactMap { $0 }.joined(separator: ".") }
}
