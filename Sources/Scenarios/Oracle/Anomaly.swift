import Replica
@_spi(Kernel) import Simulator

/// The kinds of anomaly the oracle reports (`oracle.md`), in report order.
public enum AnomalyKind: String, CaseIterable, Hashable, Sendable, Comparable, CustomStringConvertible {
  case lostEdit = "lost-edit"
  case staleOverwrite = "stale-overwrite"
  case resurrection
  case droppedEvent = "dropped-event"
  case duplicateEvent = "duplicate-event"
  case strandedRecord = "stranded-record"
  case divergence
  case phantomValue = "phantom-value"
  case stalledSync = "stalled-sync"
  case danglingReference = "dangling-reference"
  case logicalDuplicate = "logical-duplicate"
  case concurrentOverwrite = "concurrent-overwrite"
  case deleteUpdateConflict = "delete-update-conflict"
  /// A device shows records of a share its account no longer has access to (`oracle.md`,
  /// Access). Last, so that counts kept by position before sharing existed read the same.
  case accessLeak = "access-leak"
  /// A device shows a record whose asset is not on that device (`oracle.md`, Assets).
  case missingAsset = "missing-asset"

  /// Violations fail `expect no violations`; `concurrent-overwrite` and
  /// `delete-update-conflict` are informational.
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
    case .stalledSync: 8
    case .danglingReference: 9
    case .logicalDuplicate: 10
    case .concurrentOverwrite: 11
    case .deleteUpdateConflict: 12
    case .accessLeak: 13
    case .missingAsset: 14
    }
  }

  public static func < (a: AnomalyKind, b: AnomalyKind) -> Bool { a.ordinal < b.ordinal }

  /// The kind's name as reports write it: `lost-edit`.
  public var description: String { rawValue }
}

/// How many anomalies of each kind a run found, every kind present, in report order. Prints as
/// `[lost-edit: 1, stale-overwrite: 0, …]`.
///
///     report.counts[.lostEdit]                               // 1
///     for (kind, count) in report.counts where count > 0 { … }
public struct AnomalyCounts: Hashable, Sendable, Sequence, CustomStringConvertible {
  /// Counts by ``AnomalyKind/ordinal``.
  var byOrdinal: [Int]

  init(byOrdinal: [Int]) { self.byOrdinal = byOrdinal }

  /// The counts of `anomalies`, by kind.
  package init(_ anomalies: [Anomaly]) {
    var counts = [Int](repeating: 0, count: AnomalyKind.allCases.count)
    for a in anomalies { counts[a.kind.ordinal] += 1 }
    byOrdinal = counts
  }

  /// The count of one kind (0 when none was found).
  public subscript(kind: AnomalyKind) -> Int { byOrdinal[kind.ordinal] }

  /// The sum over every kind.
  public var total: Int { byOrdinal.reduce(0, +) }

  /// `(kind, count)` pairs in report order, zero counts included.
  public func makeIterator() -> IndexingIterator<[(kind: AnomalyKind, count: Int)]> {
    AnomalyKind.allCases.map { (kind: $0, count: byOrdinal[$0.ordinal]) }.makeIterator()
  }

  public var description: String {
    "[" + AnomalyKind.allCases.map { "\($0.rawValue): \(byOrdinal[$0.ordinal])" }.joined(separator: ", ") + "]"
  }
}

/// A record, by key, with its name in the scenario.
public struct RecordRef: Hashable, Sendable, CustomStringConvertible {
  /// The record's key in the run: its index in the world's record table.
  public var key: RecordKey
  /// The record's id as the scenario wrote it (`n1`).
  public var name: String
  /// A reference to record `key`, named `name`.
  public init(key: RecordKey, name: String) {
    self.key = key
    self.name = name
  }
  public var description: String { name }
}

/// A field of a record's type, by index, with its name.
public struct FieldRef: Hashable, Sendable, CustomStringConvertible {
  /// The field's index in its record type's `RecordType.fields`.
  public var index: Int
  /// The field's name (`body`).
  public var name: String
  /// A reference to field `index`, named `name`.
  public init(index: Int, name: String) {
    self.index = index
    self.name = name
  }
  public var description: String { name }
}

/// An intent, by id (`i7`).
public struct IntentRef: Hashable, Sendable, CustomStringConvertible {
  /// The intent's id: 7 for `i7`, numbered from 1 in the order intents happened.
  public var id: IntentID
  /// A reference to intent `id`, printed `i` and its number.
  public init(_ id: IntentID) { self.id = id }
  public var description: String { Vocabulary.intent(id) }
}

/// A device, by index, with its name.
public struct DeviceRef: Hashable, Sendable, CustomStringConvertible {
  /// The device's index in the scenario's `devices` line, from 0.
  public var index: Int32
  /// The device's name (`iPad`).
  public var name: String
  /// A reference to device `index`, named `name`.
  public init(index: Int32, name: String) {
    self.index = index
    self.name = name
  }
  public var description: String { name }
}

/// One thing the design lost (or, for informational kinds, decided).
public struct Anomaly: Hashable, Sendable {
  /// What was lost or decided (`oracle.md` says how each kind is judged).
  public var kind: AnomalyKind
  /// The record it concerns; nil for a run that could not settle.
  public var record: RecordRef?
  /// The field it concerns; nil when it concerns the whole record (a resurrection, a stranded
  /// record, a dropped event).
  public var field: FieldRef?
  /// The intents involved; the losing one first.
  public var intents: [IntentRef]
  /// The devices involved: the intents' devices, the losing one first, or where it was observed
  /// (the device that diverged, the one a record stranded on).
  public var devices: [DeviceRef]
  /// True time of the losing intent (or of the observation).
  public var at: VirtualTime?
  /// One sentence a developer understands without the trace.
  public var explanation: String

  /// An anomaly of `kind`; what is not given is left empty or nil.
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
