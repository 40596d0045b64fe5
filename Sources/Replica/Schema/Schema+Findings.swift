/// A way a schema is not CloudKit-safe, found statically, or a change of the app's model that
/// CloudKit will not follow: what is wrong, what it does, and the fix in the terms of the source
/// that declares it — scenario syntax for a scenario's own types; Swift for a SwiftData model and
/// the model editor's terms for a Core Data model, read with `schema from`, whose findings are
/// the importer's, word for word (`sim-cli import` prints the same ones).
public struct SchemaFinding: Hashable, Sendable, CustomStringConvertible {
  /// Which rule a type breaks; the raw value is its kebab-case name (`required-without-default`),
  /// the same for a scenario's types and for a model's.
  public enum Problem: String, Hashable, Sendable {
    case requiredWithoutDefault = "required-without-default"
    case uniqueConstraint = "unique-constraint"
    case requiredReference = "required-reference"
    case denyDeleteRule = "deny-delete-rule"
    case orderedRelationship = "ordered-relationship"
    case missingInverse = "missing-inverse"
    case notDeployed = "not-deployed"
    /// A model's relationship with the No Action delete rule (simulated as nullify).
    case noActionRule = "no-action-rule"
    /// A model's Cascade or Deny rule on a to-one, which acts on the record referred to.
    case childDeleteRule = "child-delete-rule"
    /// A model's entity with more fields than a scenario type holds.
    case tooManyFields = "too-many-fields"
    /// A model's type present in an older version and gone from the latest.
    case typeRemoved = "type-removed"
    /// A model's field present in an older version and gone from the latest.
    case fieldRemoved = "field-removed"
    /// A model's field whose type differs between versions.
    case fieldKindChanged = "field-kind-changed"
    /// A model's field renamed between versions.
    case fieldRenamed = "field-renamed"
  }

  /// A place in the app's model files: the file as the importer was given it, line and column.
  public struct ModelLocation: Hashable, Sendable, CustomStringConvertible {
    /// The file (a relative path stays relative).
    public var file: String
    /// The 1-based line.
    public var line: Int
    /// The 1-based column.
    public var column: Int
    /// The place at `line` and `column` of `file`.
    public init(file: String, line: Int, column: Int) {
      self.file = file
      self.line = line
      self.column = column
    }
    /// `FILE:LINE:COLUMN`.
    public var description: String { "\(file):\(line):\(column)" }
  }

  /// The name of the type whose records are concerned (the first, for a model's declaration
  /// that several types inherit).
  public var type: String
  /// The field at fault; nil when the whole type is (`not-deployed`, `type-removed`).
  public var field: String?
  /// Which rule is broken.
  public var problem: Problem
  /// What is wrong and what it does, in one or two sentences, without the fix.
  public var message: String
  /// The fix, in the terms of the declaring source (`write \`title: string?\``, ``give `title` a
  /// default value: `var title: String = ""` ``); lowercase, no final period.
  public var fix: String
  /// The rule as Apple states it for Core Data and SwiftData with CloudKit; empty when no rule
  /// of Apple's says it.
  public var appleRule: String
  /// Where the declaration is in the app's model, for a type read with `schema from`; nil for a
  /// scenario's own declaration (the scenario file knows its line).
  public var modelLocation: ModelLocation?
  /// The types whose uploads a run rejects because of it, so that it explains their stranded
  /// records: its ``type`` for a scenario's own finding; for a model's, those the importer says
  /// (none for a warning that stops no upload, as a field removed in a later version).
  public var blocks: [String]

  /// A finding; its ``appleRule`` is the problem's unless given, and it blocks its `type`'s
  /// uploads unless `blocks` says otherwise.
  public init(
    type: String, field: String?, problem: Problem, message: String, fix: String, appleRule: String? = nil, modelLocation: ModelLocation? = nil,
    blocks: [String]? = nil
  ) {
    self.type = type
    self.field = field
    self.problem = problem
    self.message = message
    self.fix = fix
    self.appleRule = appleRule ?? Self.appleRule(for: problem)
    self.modelLocation = modelLocation
    self.blocks = blocks ?? [type]
  }

  /// The rule as Apple states it, for each problem that breaks one.
  public static func appleRule(for problem: Problem) -> String {
    switch problem {
    case .requiredWithoutDefault: "All attributes must be optional or have a default value."
    case .uniqueConstraint: "CloudKit integration does not support unique constraints."
    case .requiredReference: "All relationships must be optional."
    case .denyDeleteRule: "CloudKit integration does not support the Deny deletion rule."
    case .orderedRelationship: "CloudKit integration does not support ordered relationships."
    case .missingInverse: "All relationships must have an inverse."
    case .notDeployed: "Record types must be deployed to the production schema before a released app uses them."
    case .typeRemoved, .fieldRemoved, .fieldKindChanged, .fieldRenamed:
      "Once a CloudKit schema is deployed to production, record types and fields cannot be deleted or changed; only additive changes are allowed."
    case .noActionRule, .childDeleteRule, .tooManyFields: ""
    }
  }

  /// The message and the fix as one paragraph: `… will never upload. Write \`note: ref Note?\`.`
  public var sentence: String {
    guard let first = fix.first else { return message }
    return message + " " + first.uppercased() + fix.dropFirst() + (fix.hasSuffix(".") ? "" : ".")
  }

  /// ``sentence``.
  public var description: String { sentence }
}

/// The types a scenario read from the app's own model (`schema from PATH`), and the importer's
/// findings about that model (its warnings), phrased in the model's terms at the model's lines.
public struct SchemaImport: Hashable, Sendable {
  /// The path as the scenario wrote it.
  public var path: String
  /// The names of the types read from the model.
  public var types: [String]
  /// The importer's warnings, in its order (by place in the model).
  public var findings: [SchemaFinding]

  /// The types read from the model at `path`, and the importer's findings about it.
  public init(path: String, types: [String], findings: [SchemaFinding]) {
    self.path = path
    self.types = types
    self.findings = findings
  }
}

extension Schema {
  /// Every CloudKit-safety problem: first the importer's findings about the app's model that
  /// types were read from (``imported``), in the model's terms; then, in schema order, those of
  /// the scenario's own types — required fields without a default, unique constraints,
  /// non-optional references, `on-delete deny`, ordered relationships, relationships without an
  /// inverse — in scenario syntax, and for every type, whether it is not deployed to production.
  /// `sim-cli check` prints these, and a stranded record's explanation quotes the first that
  /// blocks its type (``SchemaFinding/blocks``).
  public func safetyFindings() -> [SchemaFinding] {
    var findings: [SchemaFinding] = imported?.findings ?? []
    let importedTypes = imported?.types ?? []
    for type in types {
      if !importedTypes.contains(type.name) {
        for field in type.fields { findings += ruleFindings(field, of: type) }
      }
      if let deployed, !deployed.contains(type.name) {
        findings.append(
          SchemaFinding(
            type: type.name, field: nil, problem: .notDeployed,
            message: "\(type.name) is not deployed to the production schema; every upload of it fails quietly.",
            fix: "deploy it, or list it in `deployed`"))
      }
    }
    return findings
  }

  /// The problems of one field of a scenario's own type, in scenario syntax.
  func ruleFindings(_ field: FieldSpec, of type: RecordType) -> [SchemaFinding] {
    var findings: [SchemaFinding] = []
    func add(_ problem: SchemaFinding.Problem, _ message: String, fix: String) {
      findings.append(SchemaFinding(type: type.name, field: field.name, problem: problem, message: message, fix: fix))
    }
    let subject = "\(type.name).\(field.name)"
    if case .ref(let target) = field.kind {
      if !field.optional {
        add(
          .requiredReference, "\(subject) is a non-optional reference to \(target); CloudKit relationships must be optional.",
          fix: "write `\(field.name): ref \(target)?`")
      }
      if field.onDelete == .deny {
        add(
          .denyDeleteRule,
          "\(subject) denies deleting the \(target) it refers to; CloudKit cannot enforce it (another device may delete that record or add a \(type.name) at any time), so \(type.name) records will never upload.",
          fix: "write `on-delete nullify` or `on-delete cascade` and check in the app before deleting")
      }
      if field.ordered {
        add(
          .orderedRelationship,
          "\(subject) is listed by an ordered relationship of \(target); CloudKit does not keep an order, so the store does not sync and \(type.name) records will never upload.",
          fix: "remove `ordered` and store an explicit position field (an int or a fractional index) on \(type.name)")
      }
      if !field.hasInverse {
        add(
          .missingInverse,
          "\(subject) has no inverse relationship on \(target); CloudKit needs every relationship to have one, so the store does not sync and \(type.name) records will never upload.",
          fix: "add the inverse to-many on \(target) and remove `no-inverse`")
      }
    } else if !field.optional && field.defaultValue == nil {
      add(
        .requiredWithoutDefault,
        "\(subject) is required and has no default; CloudKit needs every attribute optional or defaulted, so \(type.name) records will never upload.",
        fix: field.kind == .asset
          ? "write `\(field.name): asset?` (an asset field has no default)" : "write `\(field.name): \(field.kind)?` or add `= …`")
    }
    if field.unique {
      // (The advice names what is still to do: a type that already declares the key as
      // `unique-by` only needs the constraint removed.)
      let declared: Bool =
        if case .fields(let keys)? = type.uniqueness, let f = type.fields.firstIndex(where: { $0.name == field.name }) {
          keys.contains(f)
        } else {
          false
        }
      add(
        .uniqueConstraint, "\(subject) is unique; CloudKit cannot enforce unique constraints, so \(type.name) records will never upload.",
        fix: declared
          ? "remove `unique`: `type \(type.name) unique-by …` already states the key, and deriving record names from it (policy `unique=key-name`) keeps one record per key"
          : "remove `unique`, declare `type \(type.name) unique-by \(field.name)` and derive record names from the key (policy `unique=key-name`)")
    }
    return findings
  }
}
