import RooftopShared

/// What a dashboard page's template reads: one struct per page, its stored properties named as
/// the template names them (swift-mustache reads them by reflection), every user-controlled text
/// among them escaped when rendered (``DashboardHTML``).
///
/// Every page carries the session's CSRF token, which its forms post back; a page whose title is
/// not its route's (an object's name, say) gives ``title``.
protocol DashboardPage {
    /// The session's CSRF token (set by ``DashboardPages/page(_:_:_:_:)``).
    var csrf: String { get set }
    /// The page's title, when not the route's.
    var title: String? { get }
}

extension DashboardPage {
    var title: String? { nil }
}

/// The frame of every page (template `layout`): title, navigation when signed in, a notice or
/// an error, and the page's rendered body.
struct DashboardLayout {
    var title: String
    var signedIn = false
    var csrf: String?
    var notice: String?
    var error: String?
    var body = ""
}

/// A link with a name (a class, a role).
struct NamedLink {
    var name: String
    var link: String
}

/// How one field value shows (template partial `value`): its kind and a short text, a link for a
/// pointer, links for a relation's members (see ``DashboardValues/view(_:datastoreKey:limit:)``).
struct ValueView {
    /// One member of a relation.
    struct Member {
        var text: String
        var link: String
        var hasLink = true
    }

    var present: Bool
    var kind = ""
    var text = ""
    var hasLink = false
    var link = ""
    var links: [Member] = []
}

/// The sign-in page and the pages without content of their own.
struct EmptyPage: DashboardPage {
    var csrf = ""
}

/// A message page: a failure, with the way back.
struct MessagePage: DashboardPage {
    var back: String
    var csrf = ""
}

/// `/dashboard/overview`.
struct OverviewPage: DashboardPage {
    struct Minute {
        var minute: String
        var pushes: Int
        var pulls: Int
    }

    var objects: Int
    var datastores: Int
    var users: Int
    var liveConnections: Int
    var activity: [Minute]
    var version: String
    var csrf = ""
}

/// `/dashboard/datastores`.
struct DatastoreListPage: DashboardPage {
    struct Row {
        var link: String
        var id: String
        var owner: String
        var title: String
        var records: Int
        var maxRecords: Int
        var bytes: Int
        var maxBytes: Int
    }

    var datastores: [Row]
    var next: String?
    var csrf = ""
}

/// `/dashboard/datastores/{key}`.
struct DatastoreDetailPage: DashboardPage {
    struct Grant {
        var principal: String
        var role: String
    }

    var title: String?
    var kind: String
    var owner: String
    var records: Int
    var maxRecords: Int
    var recordsPercent: Int
    var bytes: Int
    var maxBytes: Int
    var bytesPercent: Int
    var sequence: Int64
    var feedLink: String
    var classes: [NamedLink]
    var browseAction: String
    var shareable: Bool
    var roles: [Grant]
    var shareAction: String
    var csrf = ""
}

/// `/dashboard/datastores/{key}/feed`.
struct FeedPage: DashboardPage {
    struct Change {
        var sequence: Int64
        var change: String
        var className: String
        var objectId: String
        var version: Int64
        var hasLink: Bool
        var link: String
    }

    var datastore: String
    var datastoreLink: String
    var count: Int
    var changes: [Change]
    var csrf = ""
}

/// `/dashboard/datastores/{key}/classes/{className}`: a query's page of objects.
struct BrowsePage: DashboardPage {
    struct Row {
        var objectId: String
        var version: Int64
        var updatedAt: String
        var link: String
        var cells: [ValueView]
    }

    var title: String?
    var datastore: String
    var datastoreLink: String
    var settingsLink: String
    var action: String
    var query: String
    var shown: Int
    var total: Int
    var columns: [String]
    var rows: [Row]
    var csrf = ""
}

/// `/dashboard/datastores/{key}/classes/{className}/objects/{objectId}`.
struct ObjectPage: DashboardPage {
    struct Field {
        var name: String
        /// Its portable JSON form, for editing.
        var json: String
        var value: ValueView
    }

    var title: String?
    var className: String
    var classLink: String
    var datastore: String
    var datastoreLink: String
    var version: Int64
    var createdAt: String
    var updatedAt: String
    var fields: [Field]
    var acl: String
    var saveAction: String
    var deleteAction: String
    var csrf = ""
}

/// `/dashboard/users`.
struct UserListPage: DashboardPage {
    struct Row {
        var link: String
        var username: String
        var id: String
        var email: String
        var roles: String
        var createdAt: String
    }

    var users: [Row]
    var next: String?
    var csrf = ""
}

/// `/dashboard/users/{userId}`.
struct UserPage: DashboardPage {
    struct Session {
        var id: String
        var createdAt: String
        var expiresAt: String
    }

    var title: String?
    var id: String
    var email: String
    var roles: String
    var createdAt: String
    var sessions: [Session]
    var revokeAction: String
    var passwordAction: String
    var csrf = ""
}

/// `/dashboard/roles`.
struct RoleListPage: DashboardPage {
    var roles: [NamedLink]
    var csrf = ""
}

/// `/dashboard/roles/{name}`.
struct RolePage: DashboardPage {
    var title: String?
    var users: [String]
    var children: [NamedLink]
    var acl: String
    var updateAction: String
    var deleteAction: String
    var csrf = ""
}

/// `/dashboard/classes/{className}`.
struct ClassPage: DashboardPage {
    var title: String?
    var json: String
    var saveAction: String
    var csrf = ""
}
