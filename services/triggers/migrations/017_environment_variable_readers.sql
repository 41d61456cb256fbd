-- The keys of the environment variables (`{{ env.KEY }}`) a liquid workflow's steps read. They
-- were listed among its payload variables before; they move here, as the steps would list them now.
ALTER TABLE workflows ADD COLUMN environment_variables text[] NOT NULL DEFAULT '{}';

UPDATE workflows
   SET environment_variables = ARRAY(
         SELECT DISTINCT split_part(name, '.', 2) FROM unnest(variables) AS listed (name)
          WHERE name LIKE 'env.%' AND split_part(name, '.', 2) <> ''),
       variables = ARRAY(SELECT name FROM unnest(variables) AS listed (name) WHERE name <> 'env' AND name NOT LIKE 'env.%')
 WHERE template_engine = 'liquid' AND EXISTS (SELECT 1 FROM unnest(variables) AS listed (name) WHERE name = 'env' OR name LIKE 'env.%');
