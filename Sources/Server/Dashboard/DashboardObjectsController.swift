import Foundation
import Hummingbird
import RooftopShared

/// `/dashboard/datastores/{key}/classes/{className}…`: a class's objects by a query in the text
/// form, one object's fields, and its edit and delete forms (writes through the object service,
/// merged by the class's rules).
struct DashboardObjectsController {
    let pages: DashboardPages

    func register(on dashboard: RouterGroup<DashboardPages.Context>) {
        let services = pages.services
        dashboard.get("datastores/:key/classes/:className") { request, context in
            await pages.page(request, "Objects", "browse") { _ in
                let record = try await pages.datastore(context)
                let className = try context.parameter("className")
                try Identifier.validate(className, as: .className)
                let text = DashboardForm.query(request)["q"] ?? ""
                let effective = text.trimmingCharacters(in: .whitespaces).isEmpty ? "limit \(DashboardPages.pageSize)" : text
                let response = try await services.queries.find(
                    .text(className: className, text: effective, parameters: []), in: record.id,
                    context: DashboardPages.admin(for: record)
                ).response()
                let columns = Array(Array(Set(response.objects.flatMap(\.fields.keys))).sorted().prefix(12))
                return BrowsePage(
                    title: className, datastore: record.id.rawValue, datastoreLink: DashboardPath.datastore(record.key),
                    settingsLink: DashboardPath.classSettings(className),
                    action: DashboardPath.classPage(record.key, className), query: text,
                    shown: response.objects.count, total: response.totalCount, columns: columns,
                    rows: response.objects.map { object in
                        BrowsePage.Row(
                            objectId: object.objectId, version: object.version,
                            updatedAt: object.updatedAt?.description ?? "",
                            link: DashboardPath.object(record.key, className, object.objectId),
                            cells: columns.map { DashboardValues.view(object.fields[$0], datastoreKey: record.key) })
                    })
            }
        }
        let objectPath = "datastores/:key/classes/:className/objects/:objectId"
        dashboard.get(RouterPath(objectPath)) { request, context in
            await pages.page(request, "Object", "object") { _ in
                let record = try await pages.datastore(context)
                let (className, objectId) = (try context.parameter("className"), try context.parameter("objectId"))
                let object = try await services.objects.get(
                    datastore: record.id, className: className, objectId: objectId, includes: [],
                    context: DashboardPages.admin(for: record)
                ).object
                let fields = try object.fields.sorted(by: { $0.key < $1.key }).map { name, value in
                    ObjectPage.Field(
                        name: name, json: try DashboardValues.json(value),
                        value: DashboardValues.view(value, datastoreKey: record.key, limit: 2_000))
                }
                let path = DashboardPath.object(record.key, className, objectId)
                return ObjectPage(
                    title: "\(className)/\(objectId)", className: className,
                    classLink: DashboardPath.classPage(record.key, className), datastore: record.id.rawValue,
                    datastoreLink: DashboardPath.datastore(record.key), version: object.version,
                    createdAt: object.createdAt?.description ?? "", updatedAt: object.updatedAt?.description ?? "",
                    fields: fields,
                    acl: try object.acl.map { String(decoding: try JSONEncoder().encode($0), as: UTF8.self) } ?? "none",
                    saveAction: path, deleteAction: path + "/delete")
            }
        }
        dashboard.post(RouterPath(objectPath)) { request, context in
            await pages.action(request) { _, form in
                let record = try await pages.datastore(context)
                let (className, objectId) = (try context.parameter("className"), try context.parameter("objectId"))
                let updates = try Self.updates(from: form)
                let path = DashboardPath.object(record.key, className, objectId)
                guard !updates.isEmpty else { return path + "?done=unchanged" }
                let mutation = Mutation(
                    datastore: record.id, className: className, objectId: objectId,
                    baseVersion: Int64(form["baseVersion"] ?? ""), change: .update(updates, acl: nil))
                let result = try await services.objects.write(
                    mutation, context: DashboardPages.admin(for: record), idempotent: false, mustExist: true)
                if let error = result.error { throw error }
                return path + "?done=saved"
            }
        }
        dashboard.post(RouterPath(objectPath + "/delete")) { request, context in
            await pages.action(request) { _, form in
                guard form["confirm"] == "yes" else { throw RooftopError(.illegalArgument, "confirm the deletion") }
                let record = try await pages.datastore(context)
                let className = try context.parameter("className")
                let mutation = Mutation(
                    datastore: record.id, className: className, objectId: try context.parameter("objectId"),
                    change: .delete)
                let result = try await services.objects.write(
                    mutation, context: DashboardPages.admin(for: record), idempotent: false, mustExist: true)
                if let error = result.error { throw error }
                return DashboardPath.classPage(record.key, className) + "?done=deleted"
            }
        }
    }

    /// The field updates an object's edit form asks for: each shown field whose value (empty:
    /// unset) differs from the value the page showed (its `original`), and a new field. A field
    /// left as shown is not sent, so that it does not overwrite a concurrent client's change under
    /// the `local` rule; a form without originals (not sent by the page) sets every field it names.
    /// - Throws: `illegalArgument` for a value that is not in the portable JSON form or a bad name.
    static func updates(from form: DashboardForm) throws -> [FieldUpdate] {
        let names = form.all("field")
        let values = form.all("value")
        let originals = form.all("original")
        guard names.count == values.count, originals.isEmpty || originals.count == names.count else {
            throw RooftopError(.illegalArgument, "the form's fields and values do not pair")
        }
        var updates: [FieldUpdate] = []
        for (index, (name, text)) in zip(names, values).enumerated() {
            try FieldUpdate.validateField(name)
            let operation: FieldOperation
            if text.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty {
                operation = .unset
            } else {
                let value = try DashboardValues.parse(text, field: name)
                if !originals.isEmpty, try DashboardValues.parse(originals[index], field: name) == value { continue }
                operation = .set(value)
            }
            updates.append(FieldUpdate(name, operation))
        }
        if let name = form["newField"]?.trimmingCharacters(in: .whitespaces), !name.isEmpty {
            try FieldUpdate.validateField(name)
            updates.append(FieldUpdate(name, .set(try DashboardValues.parse(form["newValue"] ?? "", field: name))))
        }
        return updates
    }
}
