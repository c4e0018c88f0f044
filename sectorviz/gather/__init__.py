"""A pattern -> what its scenes and sheets are drawn from: the model's values each scene is a
pure function of (listing, analysis, one warp's details), computed for one view and handed
to sectorviz.scene. Above the scenes, below the exports, the app and the command line (which
call these with a pattern); Qt-free.
"""
