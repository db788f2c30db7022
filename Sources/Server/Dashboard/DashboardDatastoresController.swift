import Hummingbird
import RooftopShared

/// `/dashboard/datastores…`: the datastores page by page, one datastore's usage, classes and
/// sharing roles, and the tail of its change feed.
struct DashboardDatastoresController {
    let pages: DashboardPages

    func register(on dashboard: RouterGroup<DashboardPages.Context>) {
        let services = pages.services
        let limits = services.limits
        dashboard.get("datastores") { request, _ in
            await pages.page(request, "Datastores", "datastores") { _ in
                let after = Int64(DashboardForm.query(request)["after"] ?? "") ?? 0
                let records = try await services.storage.allDatastores(afterKey: after, limit: DashboardPages.pageSize + 1)
                let shown = records.prefix(DashboardPages.pageSize)
                var page = DatastoreListPage(
                    datastores: shown.map { record in
                        DatastoreListPage.Row(
                            link: DashboardPath.datastore(record.key), id: record.id.rawValue, owner: record.ownerId ?? "",
                            title: record.title ?? "", records: record.recordCount, maxRecords: limits.maxRecordsPerDatastore,
                            bytes: record.sizeBytes, maxBytes: limits.maxDatastoreBytes)
                    })
                if records.count > DashboardPages.pageSize, let last = shown.last {
                    page.next = "/dashboard/datastores?after=\(last.key)"
                }
                return page
            }
        }
        dashboard.get("datastores/:key") { request, context in
            await pages.page(request, "Datastore", "datastore") { _ in
                let record = try await pages.datastore(context)
                let classes = try await services.storage.classNames(datastoreKey: record.key)
                return DatastoreDetailPage(
                    title: "Datastore \(record.id.rawValue)", kind: "\(record.id.kind)", owner: record.ownerId ?? "—",
                    records: record.recordCount, maxRecords: limits.maxRecordsPerDatastore,
                    recordsPercent: DashboardPages.percent(record.recordCount, of: limits.maxRecordsPerDatastore),
                    bytes: record.sizeBytes, maxBytes: limits.maxDatastoreBytes,
                    bytesPercent: DashboardPages.percent(record.sizeBytes, of: limits.maxDatastoreBytes),
                    sequence: record.sequence, feedLink: DashboardPath.datastore(record.key) + "/feed",
                    classes: classes.map { NamedLink(name: $0, link: DashboardPath.classPage(record.key, $0)) },
                    browseAction: DashboardPath.datastore(record.key) + "/browse",
                    shareable: record.id.kind == .shareable,
                    roles: record.roles.sorted { $0.key < $1.key }.map {
                        DatastoreDetailPage.Grant(principal: $0.key.description, role: $0.value.name)
                    },
                    shareAction: DashboardPath.datastore(record.key) + "/share")
            }
        }
        dashboard.get("datastores/:key/browse") { request, context in
            guard try await pages.session(request) != nil else { return DashboardPages.redirect("/dashboard/login") }
            let key = try context.parameters.require("key", as: Int64.self)
            let className = DashboardForm.query(request)["class"] ?? ""
            return DashboardPages.redirect(DashboardPath.classPage(key, className))
        }
        dashboard.post("datastores/:key/share") { request, context in
            await pages.action(request) { _, form in
                let record = try await pages.datastore(context)
                let principal = try Principal(try form.required("principal"))
                let roleName = try form.required("role")
                guard let role = SharingRole.allCases.first(where: { $0.name == roleName }), role != .owner else {
                    throw RooftopError(.illegalArgument, "'\(roleName.prefix(40))' is not editor, viewer or none", field: "role")
                }
                _ = try await services.datastores.setRole(role, for: principal, on: record.id, by: DashboardPages.admin(for: record))
                return DashboardPath.datastore(record.key) + "?done=shared"
            }
        }
        dashboard.get("datastores/:key/feed") { request, context in
            await pages.page(request, "Change feed", "feed") { _ in
                let record = try await pages.datastore(context)
                let count = 50
                let changed = try await services.storage.recentChanges(datastoreKey: record.key, limit: count)
                return FeedPage(
                    datastore: record.id.rawValue, datastoreLink: DashboardPath.datastore(record.key), count: count,
                    changes: changed.map { object in
                        FeedPage.Change(
                            sequence: object.sequence, change: object.isDeleted ? "delete" : "upsert",
                            className: object.className, objectId: object.objectId, version: object.version,
                            hasLink: !object.isDeleted, link: DashboardPath.object(record.key, object.className, object.objectId))
                    })
            }
        }
    }
}
