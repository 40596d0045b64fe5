/// A place in the user's model files: the file as given (relative path), 1-based line and column.
public struct SourceLocation: Hashable, Sendable, Comparable, CustomStringConvertible {
  /// The file, as the importer was given it (a relative path stays relative).
  public var file: String
  /// The 1-based line.
  public var line: Int
  /// The 1-based column (in bytes of the line, which is characters for ASCII source).
  public var column: Int

  /// A location in `file` at `line`:`column`.
  public init(file: String, line: Int, column: Int) {
    self.file = file
    self.line = line
    self.column = column
  }

  /// `FILE:LINE:COLUMN`.
  public var description: String { "\(file):\(line):\(column)" }

  /// Orders by file, then line, then column.
  public static func < (a: SourceLocation, b: SourceLocation) -> Bool {
    (a.file, a.line, a.column) < (b.file, b.line, b.column)
  }
}

/// Where an imported model came from.
public enum ModelSource: String, Hashable, Sendable {
  /// SwiftData `@Model` classes in Swift sources.
  case swiftData
  /// A Core Data `.xcdatamodeld` / `.xcdatamodel` / `contents` file.
  case coreData

  /// `SwiftData` or `Core Data`, for headers and messages.
  public var displayName: String {
    switch self {
    case .swiftData: "SwiftData"
    case .coreData: "Core Data"
    }
  }
}

/// The scenario kind of an imported field.
public enum ImportedKind: Hashable, Sendable {
  /// A short string (also every opaque value: enums, structs, `UUID`, `URL`…).
  case string
  /// A long, collaboratively edited text (never inferred by the importer, kept for completeness).
  case text
  /// A 64-bit integer.
  case int
  /// A floating-point number (`Double`, `Float`, `Decimal`).
  case double
  /// Bytes stored in the record (`Data`, Core Data's Binary).
  case bytes
  /// A Boolean.
  case bool
  /// A date.
  case date
  /// A reference to one record of the named type.
  case ref(String)

  /// The kind as the scenario format spells it (`string`, `ref Trip`).
  public var scenarioName: String {
    switch self {
    case .string: "string"
    case .text: "text"
    case .int: "int"
    case .double: "double"
    case .bytes: "bytes"
    case .bool: "bool"
    case .date: "date"
    case .ref(let type): "ref \(type)"
    }
  }

  /// The zero literal of the kind (`""`, `0`, `0.0`, `false`, `0s`, `0x`), `nil` for a reference.
  public var zeroLiteral: String? {
    switch self {
    case .string, .text: "\"\""
    case .int: "0"
    case .double: "0.0"
    case .bytes: "0x"
    case .bool: "false"
    case .date: "0s"
    case .ref: nil
    }
  }
}

/// What happens to a referring record when the record it refers to is deleted.
public enum ImportedDeleteRule: String, Hashable, Sendable {
  /// The referring record is deleted too.
  case cascade
  /// The reference is cleared.
  case nullify
  /// The delete is refused while a record refers to it.
  case deny
}

/// One field of an imported type, as the scenario schema declares it.
public struct ImportedField: Hashable, Sendable {
  /// The field's name (sanitized to the scenario grammar).
  public var name: String
  /// Where the property is declared (in the latest version).
  public var location: SourceLocation
  /// The scenario kind.
  public var kind: ImportedKind
  /// Whether the field may be absent (`?`).
  public var optional: Bool
  /// The default, as a scenario literal (`""`, `0`, `true`, `0s`), if the source has one.
  public var defaultLiteral: String?
  /// Whether the field alone is unique (`unique`).
  public var unique: Bool
  /// For a reference: what happens to this record when the referred-to record is deleted.
  public var onDelete: ImportedDeleteRule?
  /// The first model version (counting from 1) that has the field.
  public var since: Int
  /// For a reference: the relationship on the other side (`Trip.legs`), if there is one.
  public var inverseOf: String?
  /// For a reference: the to-many on the other side that lists these records is ordered
  /// (`ordered`).
  public var ordered: Bool = false
  /// For a reference: whether the relationship has an inverse (`no-inverse` when not).
  public var hasInverse: Bool = true

  /// A field with every property given.
  public init(
    name: String, location: SourceLocation, kind: ImportedKind, optional: Bool, defaultLiteral: String? = nil, unique: Bool = false,
    onDelete: ImportedDeleteRule? = nil, since: Int = 1, inverseOf: String? = nil
  ) {
    self.name = name
    self.location = location
    self.kind = kind
    self.optional = optional
    self.defaultLiteral = defaultLiteral
    self.unique = unique
    self.onDelete = onDelete
    self.since = since
    self.inverseOf = inverseOf
  }
}

/// One imported record type.
public struct ImportedType: Hashable, Sendable {
  /// The type's name (sanitized to the scenario grammar).
  public var name: String
  /// Where the class or entity is declared (in the latest version).
  public var location: SourceLocation
  /// Always `false`: the importer never infers a singleton.
  public var singleton: Bool
  /// The fields of the type's uniqueness constraint, if it has one.
  public var uniqueBy: [String]
  /// The first model version (counting from 1) that has the type.
  public var since: Int
  /// The fields, in declaration order.
  public var fields: [ImportedField]

  /// A type with every property given.
  public init(name: String, location: SourceLocation, singleton: Bool = false, uniqueBy: [String] = [], since: Int = 1, fields: [ImportedField]) {
    self.name = name
    self.location = location
    self.singleton = singleton
    self.uniqueBy = uniqueBy
    self.since = since
    self.fields = fields
  }
}

/// A model read from SwiftData sources or a Core Data model: its types in the latest version and
/// the findings about it.
public struct ImportedModel: Sendable {
  /// SwiftData or Core Data.
  public var source: ModelSource
  /// What was read (the path given, or the files), for the header of the schema.
  public var origin: String
  /// The model versions in order, oldest first (empty for unversioned SwiftData sources).
  public var versions: [String]
  /// The types of the latest version, in declaration order.
  public var types: [ImportedType]
  /// The findings, ordered by location.
  public var findings: [ImportFinding]

  /// A model with every property given.
  public init(source: ModelSource, origin: String, versions: [String], types: [ImportedType], findings: [ImportFinding]) {
    self.source = source
    self.origin = origin
    self.versions = versions
    self.types = types
    self.findings = findings
  }

  /// The findings of severity warning (CloudKit incompatibilities).
  public var warnings: [ImportFinding] { findings.filter { $0.severity == .warning } }
}

/// Something the importer found about the model: a CloudKit incompatibility (warning) or an
/// approximation or something it could not read (note).
public struct ImportFinding: Hashable, Sendable {
  /// How serious a finding is.
  public enum Severity: String, Hashable, Sendable {
    /// A CloudKit incompatibility, or a model change CloudKit will not follow.
    case warning
    /// What the importer approximated or could not read.
    case note
  }

  /// The declaration the finding is about.
  public var location: SourceLocation
  /// Warning or note.
  public var severity: Severity
  /// A kebab-case identifier (`unique-constraint`, `required-without-default`): for a warning, a
  /// `SchemaFinding.Problem` of the Replica module, the name `sim-cli check` gives it.
  public var rule: String
  /// One sentence: what is wrong and what it does at run time.
  public var message: String
  /// The rule as Apple states it, if the finding is about one (empty for importer notes).
  public var appleRule: String
  /// A concrete fix, in the model's terms: Swift for SwiftData, the model editor's for Core Data.
  public var fix: String
  /// The type the finding is about, by its scenario name (the first entity that inherits it,
  /// for a declaration of an abstract entity), when it is about one.
  public var type: String?
  /// The field the finding is about, by its scenario name, when it is about one.
  public var field: String?
  /// The types (scenario names) whose records a run rejects at upload because of what the
  /// finding is about, as the imported schema states it (a required field, a `unique` field, a
  /// reference that is required, `on-delete deny`, `ordered` or `no-inverse`); empty for a
  /// finding that stops no upload (a removed field, a constraint over several fields).
  public var blocks: [String] = []

  /// A finding with every property given.
  public init(location: SourceLocation, severity: Severity, rule: String, message: String, appleRule: String = "", fix: String = "") {
    self.location = location
    self.severity = severity
    self.rule = rule
    self.message = message
    self.appleRule = appleRule
    self.fix = fix
  }

  /// `FILE:LINE:COLUMN: warning: MESSAGE`, then indented `Apple's rule: …` and `fix: …` lines
  /// (each only when present); ends with a newline.
  public func rendered() -> String {
    var text = "\(location): \(severity.rawValue): \(message)\n"
    if !appleRule.isEmpty { text += "  Apple's rule: \(appleRule)\n" }
    if !fix.isEmpty { text += "  fix: \(fix)\n" }
    return text
  }
}

/// Why a model could not be imported.
public struct ImportError: Error, Hashable, Sendable, CustomStringConvertible {
  /// The kind of failure.
  public enum Reason: String, Hashable, Sendable {
    /// The path does not exist.
    case notFound
    /// Nothing recognisable: no `@Model` class and no Core Data model.
    case nothingRecognisable
    /// A file could not be read.
    case unreadable
    /// A file is larger than ``ModelImporter/maximumFileSize``, or a Core Data model's entities
    /// inherit more fields than the importer copies (100,000 in all).
    case tooLarge
    /// A file could not be parsed (malformed XML).
    case malformed
  }

  /// The kind of failure.
  public var reason: Reason
  /// The path concerned.
  public var path: String
  /// Where, for a parse error.
  public var location: SourceLocation?
  /// What went wrong, as one sentence without the location.
  public var message: String

  /// An error with every property given.
  public init(reason: Reason, path: String, location: SourceLocation? = nil, message: String) {
    self.reason = reason
    self.path = path
    self.location = location
    self.message = message
  }

  /// `FILE:LINE:COLUMN: error: MESSAGE` for a parse error, else the message.
  public var description: String {
    if let location { return "\(location): error: \(message)" }
    return message
  }
}
