"""Company sources: connectors that list what changed since a cursor, and the sync that writes it.

``connector``  the seam every source implements (``Connector.changes``) and what it yields
``state``      durable sync state: sources, cursors, per-document versions (SQLite or PostgreSQL)
``web``        an intranet site through its sitemap, robots.txt and conditional GETs
``confluence`` Confluence Cloud spaces, with page restrictions and space permissions
``sharepoint`` SharePoint libraries and OneDrive through Microsoft Graph, with item permissions
``gdrive``     a Google shared drive or folder, through its changes feed, with each file's sharing
``sync``       one loop for every connector: write a batch to the index, then advance the cursor

Nothing here is imported by ``footnote ask``: answering a question needs no sync state.
"""
