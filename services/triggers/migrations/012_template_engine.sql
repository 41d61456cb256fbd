-- The language of a workflow's templates: v1 writes make handlebars workflows, v2 writes liquid
-- ones. Workflows stored before are handlebars, which is how they have been rendered so far.
ALTER TABLE workflows
  ADD COLUMN template_engine text NOT NULL DEFAULT 'handlebars' CHECK (template_engine IN ('handlebars', 'liquid'));
