import Simulator

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

/// One thing the design lost (or, for informational kinds, decided).
public struct Anomaly: Hashable, Sendable {
  public var kind: AnomalyKind
  public var record: String?
  public var field: String?
  /// Intent ids involved, as `i7`; the losing one first.
  public var intents: [String]
  public var devices: [String]
  /// True time of the losing intent (or of the observation).
  public var at: VirtualTime?
  /// One sentence a developer understands without the trace.
  public var explanation: String

  public init(kind: AnomalyKind, record: String?, field: String? = nil, intents: [String] = [], devices: [String] = [], at: VirtualTime? = nil, explanation: String) {
    self.kind = kind
    self.record = record
    self.field = field
    self.intents = intents
    self.devices = devices
    self.at = at
    self.explanation = explanation
  }
}
