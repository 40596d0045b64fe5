import Replica

/// What a lesson's timeline and expectations use of its schema: the types it creates, the fields
/// it writes, edits or checks, every literal written to each, and whether it makes a record
/// again under a deleted one's name.
struct _LessonUses {
  /// A field the lesson uses.
  struct Field {
    /// The field as the lesson declares it.
    var spec: FieldSpec
    /// A `set` writes it.
    var edited = false
    /// An `append` or `replace` edits it.
    var appended = false
    /// The distinct literals written to it or expected of it, in order of first appearance
    /// (creates and sets in timeline order, then expectations).
    var literals: [Literal] = []
  }

  /// A type the lesson creates.
  struct UsedType {
    /// The type as the lesson declares it.
    var spec: RecordType
    /// The distinct ids created of it, in timeline order.
    var ids: [String]
    /// The fields used, in declaration order.
    var fields: [Field]
  }

  /// The types created, in the lesson's declaration order.
  var types: [UsedType]
  /// The first create of an id already created (after a delete of it), and its line (0 for a
  /// file built in code).
  var recreated: (id: String, line: Int)?
  /// The lesson type of each created id.
  var typeOfID: [String: String]

  init(_ file: ScenarioFile) {
    let lessonTypes = file.schema.types
    var typeOf: [String: String] = [:]
    var ids: [[String]] = lessonTypes.map { _ in [] }
    var recreated: (id: String, line: Int)?
    for entry in file.timeline {
      guard case .create(_, let type, let id, _) = entry.action else { continue }
      if typeOf[id] != nil {
        if recreated == nil { recreated = (id, entry.location.line) }
      } else if let t = file.schema.typeIndex(named: type) {
        typeOf[id] = type
        ids[t].append(id)
      }
    }

    var fields: [[Field]] = lessonTypes.map { $0.fields.map { Field(spec: $0) } }
    var used: [[Bool]] = lessonTypes.map { $0.fields.map { _ in false } }
    func note(_ typeName: String?, _ fieldName: String, _ literals: [Literal], edited: Bool = false, appended: Bool = false) {
      guard let typeName, let t = file.schema.typeIndex(named: typeName), let f = lessonTypes[t].fieldIndex(named: fieldName) else { return }
      used[t][f] = true
      fields[t][f].edited = fields[t][f].edited || edited
      fields[t][f].appended = fields[t][f].appended || appended
      for literal in literals where !fields[t][f].literals.contains(literal) { fields[t][f].literals.append(literal) }
    }
    for entry in file.timeline {
      switch entry.action {
      case .create(_, let type, _, let assignments):
        for a in assignments { note(type, a.field, [a.value]) }
      case .set(_, let id, let assignments):
        for a in assignments { note(typeOf[id], a.field, [a.value], edited: true) }
      case .append(_, let id, let field, _), .replace(_, let id, let field, _, _):
        note(typeOf[id], field, [], appended: true)
      default:
        break
      }
    }
    for expectation in file.expectations {
      switch expectation.kind {
      case .fieldEquals(let id, let field, let value): note(typeOf[id], field, [value])
      case .fieldIn(let id, let field, let values): note(typeOf[id], field, values)
      default: break
      }
    }

    var types: [UsedType] = []
    for t in lessonTypes.indices where !ids[t].isEmpty {
      // The fields a lesson type is unique by are part of its role.
      if case .fields(let unique)? = lessonTypes[t].uniqueness { for f in unique { used[t][f] = true } }
      let usedFields = fields[t].indices.filter { used[t][$0] }.map { fields[t][$0] }
      types.append(UsedType(spec: lessonTypes[t], ids: ids[t], fields: usedFields))
    }
    self.types = types
    self.recreated = recreated
    self.typeOfID = typeOf
  }
}
