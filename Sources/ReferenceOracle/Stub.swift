import Replica
import Simulator

// TEMPORARY stub until the reference checker lands (deleted at merge).
public struct ReferenceVerdict: Hashable, Sendable, Comparable {
  public var kind: String
  public var record: RecordKey?
  public var field: Int?
  public init(kind: String, record: RecordKey?, field: Int?) {
    self.kind = kind
    self.record = record
    self.field = field
  }
  public static func < (a: ReferenceVerdict, b: ReferenceVerdict) -> Bool {
    (a.kind, a.record ?? -1, a.field ?? -1) < (b.kind, b.record ?? -1, b.field ?? -1)
  }
}
extension ReferenceOracle {
  public static func judge(_ world: SyncWorld) -> [ReferenceVerdict] { [] }
}
