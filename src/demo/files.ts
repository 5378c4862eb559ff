// Demo data: folders and image files (logos and avatars of companies, users and clients).
import type { DemoContext } from './context.ts';
import { mkDay } from './dates.ts';
import type { Agency } from './model.ts';

export function addFiles(ctx: DemoContext): Pick<Agency, 'fileRng' | 'imagesFolder' | 'projectsFolder' | 'imageFile'> {
  const { rngFor, add, audit } = ctx;
  const rFiles = rngFor('files');
  const imagesFolder = rFiles.uuid();
  const projectsFolder = rFiles.uuid();
  add('folders', { id: imagesFolder, parent_id: null, name: 'Images', document_type_id: null, document_id: null, ...audit(mkDay(2024, 1, 2), 540, null) });
  add('folders', { id: projectsFolder, parent_id: null, name: 'Projects', document_type_id: null, document_id: null, ...audit(mkDay(2024, 1, 2), 541, null) });
  const imageFile = (name: string): string => {
    const id = rFiles.uuid();
    add('files', {
      id,
      folder_id: imagesFolder,
      name,
      content_type: 'image/png',
      size_bytes: rFiles.int(8_000, 200_000),
      storage_key: `images/${id}.png`,
      link_url: null,
      ...audit(mkDay(2024, 1, 3), rFiles.int(540, 1000), null),
    });
    return id;
  };
  return { fileRng: rFiles, imagesFolder, projectsFolder, imageFile };
}
