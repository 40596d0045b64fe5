/// The kind of a property as read from the source, before relationships are paired.
enum RawKind: Hashable {
  case string
  case int
  /// `Double`, `Float`, `Decimal` (and Core Data's attribute types of those names).
  case double
  case bool
  case date
  /// `Data`, Core Data's Binary.
  case bytes
  /// Simulated as an opaque string; the source type's name.
  case opaque(String)
  /// A relationship to the named type.
  case relationship(String, toMany: Bool)

  var isRelationship: Bool {
    if case .relationship = self { return true }
    return false
  }

  /// The scenario kind (a relationship's is the reference).
  var scenarioKind: ImportedKind {
    switch self {
    case .string, .opaque: .string
    case .int: .int
    case .double: .double
    case .bytes: .bytes
    case .bool: .bool
    case .date: .date
    case .relationship(let target, _): .ref(target)
    }
  }
}

/// The delete rule of a relationship, as the source states it.
enum RawDeleteRule: String {
  case nullify
  case cascade
  case deny
  case noAction

  var sourceName: String {
    switch self {
    case .nullify: "Nullify"
    case .cascade: "Cascade"
    case .deny: "Deny"
    case .noAction: "No Action"
    }
  }
}

/// One stored property (attribute or relationship) of a class or entity.
struct RawProperty {
  var name: String
  var location: SourceLocation
  /// The type as written (`String?`, `[Leg]`, `Integer 64`).
  var typeText: String
  var kind: RawKind
  var optional: Bool
  var hasDefault = false
  /// The default as a literal of the kind, when the source's default is a literal of it.
  var defaultLiteral: String?
  /// The default as written, for messages.
  var defaultText: String?
  var unique = false
  /// `@Attribute(.unique)` with no other option (its whole attribute can go).
  var uniqueAlone = false
  var originalName: String?
  var deleteRule: RawDeleteRule?
  /// The inverse relationship's name on the destination.
  var inverse: String?
  var ordered = false
  /// Inherited from a parent entity (Core Data).
  var inheritedFrom: String?
}

/// A uniqueness constraint over one or more properties.
struct RawUniqueness {
  var fields: [String]
  var location: SourceLocation
  /// Written as `@Attribute(.unique)` on the field itself.
  var fromAttribute: Bool
  /// The entity that declares it (its heirs hold a copy).
  var entity: String
  /// `@Attribute(.unique)` with no other option.
  var alone = false
}

/// One `@Model` class or Core Data entity.
struct RawEntity {
  var name: String
  var location: SourceLocation
  var properties: [RawProperty] = []
  var uniqueness: [RawUniqueness] = []
  var isAbstract = false
  var parent: String?
}

/// One model version.
struct RawVersion {
  var name: String
  var entities: [RawEntity]
}

/// Collects findings while reading, in one place.
struct FindingLog {
  var findings: [ImportFinding] = []

  mutating func note(_ location: SourceLocation, _ rule: String, _ message: String, fix: String = "", about: ModelSubject? = nil) {
    var finding = ImportFinding(location: location, severity: .note, rule: rule, message: message, appleRule: "", fix: fix)
    finding.type = about?.entity
    finding.field = about?.property
    findings.append(finding)
  }

  mutating func warning(_ location: SourceLocation, _ rule: String, _ message: String, apple: String, fix: String, about: ModelSubject? = nil) {
    var finding = ImportFinding(location: location, severity: .warning, rule: rule, message: message, appleRule: apple, fix: fix)
    finding.type = about?.entity
    finding.field = about?.property
    finding.blocks = about?.blocks ?? []
    findings.append(finding)
  }
}

/// What a finding is about, by the model's names (made the scenario's names when the model is
/// built).
struct ModelSubject {
  var entity: String
  var property: String?
  /// The entities whose records a run rejects because of it.
  var blocks: [String] = []

  /// The same subject, blocking the uploads of `entities`.
  func blocking(_ entities: [String]) -> ModelSubject {
    var subject = self
    subject.blocks = entities
    return subject
  }
}

/// Apple's rules, as Apple states them.
enum AppleRule {
  static let unique = "CloudKit integration does not support unique constraints."
  static let optionalOrDefault = "All attributes must be optional or have a default value."
  static let optionalRelationships = "All relationships must be optional."
  static let inverses = "All relationships must have an inverse."
  static let deny = "CloudKit integration does not support the Deny deletion rule."
  static let ordered = "CloudKit integration does not support ordered relationships."
  static let schemaAdditive =
    "Once a CloudKit schema is deployed to production, record types and fields cannot be deleted or changed; only additive changes are allowed."
}
