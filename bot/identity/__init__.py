"""Who someone is and what they may read: the ``Directory`` seam and its sources (a YAML file,
the SCIM store an identity provider pushes to, Microsoft Graph behind a Redis cache), sign-in to
document links with OpenID Connect, and who may open /admin. What may live here: code that turns
a platform id, an e-mail or a token into a person and their groups; not the pages that use it
(``web/``).
"""
